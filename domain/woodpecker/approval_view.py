"""The MCP Apps approval view (ADR 0049): one static, self-contained `ui://` HTML resource.

Pure data (no I/O): the MCP adapter serves it; the guarded-call use case names its URI.

It loads nothing from anywhere (no external origin, no `src`/`href` to fetch), so the host's
restrictive CSP default applies as it is. It speaks the host bridge (JSON-RPC over postMessage):
`ui/initialize` (then `ui/notifications/size-changed` as its height changes), and it waits for the tool's arguments (`ui/notifications/tool-input`) and its
result (`ui/notifications/tool-result`), and shows only the approval data this server put in the
result's `_meta`: the question (inserted with `textContent`, never as HTML), the tool's name and
the ticket. Its buttons call the app-only tool; what it says afterwards is its own fixed text,
chosen by the result's `structuredContent.outcome` and `isError`, never the result's text (which
may quote pushed text).
"""

from domain.guard.outcomes import APPROVAL_META_KEY

VIEW_URI = "ui://woodpecker-ci/approval"
APP_MIME_TYPE = "text/html;profile=mcp-app"
APPS_EXTENSION = "io.modelcontextprotocol/ui"
# The app-only tool the view's buttons call (visibility ["app"]: the host keeps it from the model).
APP_TOOL = "answer_approval_view"

_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; \
style-src 'unsafe-inline'; img-src 'none'; connect-src 'none'; frame-src 'none'; form-action 'none'; \
base-uri 'none'; object-src 'none'">
<title>Approve a Woodpecker CI change</title>
<style>
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1a1a1a; --muted: #555555; --line: #c8c8c8;
  --accent: #0b57d0; --accent-fg: #ffffff; --focus: #e8710a; }
@media (prefers-color-scheme: dark) { :root:not([data-theme="light"]) { --bg: #1b1b1b; --fg: #ececec;
  --muted: #b5b5b5; --line: #4a4a4a; --accent: #8ab4f8; --accent-fg: #0b1a33; } }
:root[data-theme="dark"] { --bg: #1b1b1b; --fg: #ececec; --muted: #b5b5b5; --line: #4a4a4a;
  --accent: #8ab4f8; --accent-fg: #0b1a33; }
body { margin: 0; padding: 16px; background: var(--bg); color: var(--fg);
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.05rem; margin: 0 0 8px; }
p { margin: 0 0 10px; color: var(--muted); }
#question { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 14px; padding: 10px 12px;
  border: 1px solid var(--line); border-radius: 6px; font: 14px/1.45 ui-monospace, monospace; color: var(--fg); }
.actions { display: flex; gap: 10px; }
button { font: inherit; padding: 8px 18px; border-radius: 6px; border: 1px solid var(--line);
  background: transparent; color: var(--fg); cursor: pointer; }
button#approve { background: var(--accent); color: var(--accent-fg); border-color: var(--accent); }
button:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button:disabled { opacity: .5; cursor: default; }
#status { margin-top: 12px; color: var(--fg); min-height: 1.4em; }
</style>
</head>
<body>
<main aria-labelledby="title">
<h1 id="title">Approve a change in Woodpecker CI?</h1>
<p id="what">Approve runs the call below once, exactly as shown. Decline, or no answer before it expires, \
runs nothing.</p>
<pre id="question" aria-label="What the call will do">Waiting for the call to approve.</pre>
<div class="actions" role="group" aria-label="Your answer">
<button type="button" id="approve" disabled>Approve</button>
<button type="button" id="decline" disabled>Decline</button>
</div>
<p id="status" role="status" aria-live="polite"></p>
</main>
<script>
"use strict";
(function () {
  var META = "__META__", TOOL = "__TOOL__";
  var nextId = 1, pending = {}, args = null, approval = null, expiry = null;
  var q = document.getElementById("question"), st = document.getElementById("status");
  var ok = document.getElementById("approve"), no = document.getElementById("decline");
  function send(msg) { window.parent.postMessage(msg, "*"); }
  function request(method, params) {
    var id = nextId++;
    send({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function say(text) { st.textContent = text; }
  function ready() { return approval !== null && args !== null; }
  function enable(on) { ok.disabled = !on; no.disabled = !on; }
  function show(result, again) {
    var meta = result && result._meta && result._meta[META];
    if (!meta || typeof meta.question !== "string" || typeof meta.ticket !== "string") {
      approval = null; enable(false);
      q.textContent = "Nothing here needs your approval.";
      return false;
    }
    approval = { tool: String(meta.tool), ticket: meta.ticket };
    q.textContent = meta.question;
    if (expiry) { clearTimeout(expiry); }
    var ttl = Number(meta.expires_in_seconds) > 0 ? Number(meta.expires_in_seconds) : 600;
    expiry = setTimeout(function () {
      approval = null; enable(false);
      say("This question expired: nothing was done. Ask for the change again to see a new one.");
    }, ttl * 1000);
    enable(ready());
    if (again) { say("That approval was no longer valid, so nothing was done. Here is the question again."); }
    return true;
  }
  function settled(result) {
    var s = (result && result.structuredContent) || {};
    if (show(result, true)) { return; }
    if (s.outcome === "declined") { say("Declined: nothing was done."); }
    else if (result && result.isError) { say("The call did not go through. This view shows no reason and tells the conversation nothing."); }
    else { say("Approved: the call ran once. This view shows no result and tells the conversation nothing."); }
  }
  function answer(yes) {
    if (!ready()) { return; }
    var a = approval; approval = null; enable(false);
    if (expiry) { clearTimeout(expiry); expiry = null; }
    say(yes ? "Approved: running the call…" : "Declining…");
    request("tools/call", { name: TOOL, arguments: { tool: a.tool, arguments: args, ticket: a.ticket,
      approve: yes } }).then(settled, function () {
      say("The answer could not be delivered: nothing was done. Ask for the change again.");
    });
  }
  ok.addEventListener("click", function () { answer(true); });
  no.addEventListener("click", function () { answer(false); });
  function theme(ctx) {
    if (ctx && (ctx.theme === "dark" || ctx.theme === "light")) {
      document.documentElement.setAttribute("data-theme", ctx.theme);
    }
  }
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) { return; }
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") { return; }
    if (m.id !== undefined && pending[m.id] && m.method === undefined) {
      var p = pending[m.id]; delete pending[m.id];
      if (m.error) { p.reject(m.error); } else { p.resolve(m.result); }
      return;
    }
    if (m.method === "ui/notifications/tool-input") {
      var a = (m.params && m.params.arguments) || {};
      var copy = {};
      Object.keys(a).forEach(function (k) { if (k !== "confirm_token") { copy[k] = a[k]; } });
      args = copy; enable(ready());
    } else if (m.method === "ui/notifications/tool-result") {
      show(m.params, false);
    } else if (m.method === "ui/notifications/host-context-changed") {
      theme(m.params);
    } else if (m.method === "ui/resource-teardown" && m.id !== undefined) {
      send({ jsonrpc: "2.0", id: m.id, result: {} });
    }
  });
  request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "woodpecker-ci-approval",
    version: "1" }, appCapabilities: { availableDisplayModes: ["inline"] } }).then(function (r) {
    theme(r && r.hostContext);
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    if (window.ResizeObserver) {
      new ResizeObserver(function () {
        var box = document.documentElement.getBoundingClientRect();
        send({ jsonrpc: "2.0", method: "ui/notifications/size-changed",
          params: { width: Math.ceil(box.width), height: Math.ceil(box.height) } });
      }).observe(document.documentElement);
    }
  }, function () { say("This host did not start the view; nothing can be approved here."); });
})();
</script>
</body>
</html>
"""

APPROVAL_VIEW_HTML = _HTML.replace("__META__", APPROVAL_META_KEY).replace("__TOOL__", APP_TOOL)
