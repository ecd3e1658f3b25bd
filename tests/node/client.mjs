// An independent MCP client (the official TypeScript SDK, @modelcontextprotocol/client 2.x)
// that the Python tests drive: it reads one JSON plan on stdin, spawns the server over stdio,
// does what the plan says, and prints one JSON report on stdout.
//
// plan: { command, args, env, era: "legacy" | "modern", elicitation: bool (declare the capability),
//         listTools: bool, calls: [{ name, arguments, answer: "accept" | "false" | "decline" | "cancel" }],
//         listTemplates: bool, reads: [uri], completions: [{ ref, argument, context }] }
// report: { era, tools?, calls: [{ result, questions }], templates?, reads: [result], completions: [result] }
//         or { error }
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const ANSWERS = {
  accept: { action: "accept", content: { confirm: true } },
  false: { action: "accept", content: { confirm: false } },
  decline: { action: "decline" },
  cancel: { action: "cancel" },
};

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

async function main() {
  const plan = await readStdin();
  const declares = Boolean(plan.elicitation);
  let answer = "decline";
  const client = new Client(
    { name: "woodpecker-ci-mcp-node-tests", version: "0.0.0" },
    {
      capabilities: declares ? { elicitation: { form: {} } } : {},
      versionNegotiation: { mode: plan.era === "modern" ? { pin: "2026-07-28" } : "legacy" },
    },
  );
  let questions = [];
  if (declares) {
    client.setRequestHandler("elicitation/create", async (request) => {
      questions.push(request.params.message);
      return ANSWERS[answer];
    });
  }
  const transport = new StdioClientTransport({
    command: plan.command,
    args: plan.args,
    env: plan.env,
    stderr: "ignore",
  });
  await client.connect(transport);
  const report = { era: client.getProtocolEra() ?? null, calls: [], reads: [], completions: [] };
  try {
    if (plan.listTools) {
      report.tools = (await client.listTools()).tools;
    }
    for (const call of plan.calls ?? []) {
      questions = [];
      answer = call.answer ?? "decline";
      const result = await client.callTool({ name: call.name, arguments: call.arguments });
      report.calls.push({ result, questions });
    }
    if (plan.listTemplates) {
      report.templates = (await client.listResourceTemplates()).resourceTemplates;
    }
    for (const uri of plan.reads ?? []) {
      report.reads.push(await client.readResource({ uri }));
    }
    for (const completion of plan.completions ?? []) {
      report.completions.push(await client.complete(completion));
    }
  } finally {
    await client.close();
  }
  process.stdout.write(JSON.stringify(report) + "\n");
}

main().catch((error) => {
  process.stdout.write(JSON.stringify({ error: String(error && error.stack ? error.stack : error) }) + "\n");
  process.exitCode = 1;
});
