"""The MCP Apps approval view (ADR 0049, ADR 0066): one static, self-contained `ui://` HTML resource.

Pure data (no I/O): the MCP adapter serves it; the guarded-call use case names its URI.

It loads nothing from anywhere (no external origin, no `src`/`href` to fetch), so the host's
restrictive CSP default applies as it is, and its own CSP refuses what host fonts would fetch. It
speaks the host bridge (JSON-RPC over postMessage, MCP Apps 2026-01-26): `ui/initialize` (taking
the host's theme, style variables and `@font-face` rules), then `ui/notifications/size-changed`
as its height changes; it answers `ping` and `ui/resource-teardown`, and takes the tool's
arguments (`tool-input`), its result (`tool-result`) or its cancellation (`tool-cancelled`).

It shows only the approval data this server put in the result's `_meta`: the question (inserted
with `textContent`, never as HTML), the tool's name and the ticket. Before it offers buttons it
asks the server (the app-only check tool) whether that ticket is still open: a host that renders
the view again after its question was answered (a conversation reloaded) shows what was decided
instead. Each question stays on the page with what became of it; a new question (the call
changed under an approval) is a new card below. What it says is its own fixed text, chosen by the
results' `structuredContent` (`outcome`, `state`, `done`) and `isError`, never a result's text
(which may quote pushed text). A host error on an answer is an unknown outcome, never "nothing
was done", until the server's record says which.
"""

from domain.guard.outcomes import APPROVAL_META_KEY

VIEW_URI = "ui://woodpecker-ci/approval"
APP_MIME_TYPE = "text/html;profile=mcp-app"
APPS_EXTENSION = "io.modelcontextprotocol/ui"
# The app-only tool the view's buttons call (visibility ["app"]: the host keeps it from the model).
APP_TOOL = "answer_approval_view"
# The app-only tool the view calls when it is shown: is its question still open, or what was decided.
APP_STATE_TOOL = "check_approval_view"

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
:root { color-scheme: light dark; --bg: var(--color-background-primary, #fff); \
--fg: var(--color-text-primary, #1a1a1a); --muted: var(--color-text-secondary, #555); \
--line: var(--color-border-primary, #c8c8c8); --accent: var(--color-background-inverse, #0b57d0); \
--accent-fg: var(--color-text-inverse, #fff); --focus: var(--color-ring-primary, #e8710a); }
@media (prefers-color-scheme: dark) { :root:not([data-theme="light"]) { \
--bg: var(--color-background-primary, #1b1b1b); --fg: var(--color-text-primary, #ececec); \
--muted: var(--color-text-secondary, #b5b5b5); --line: var(--color-border-primary, #4a4a4a); \
--accent: var(--color-background-inverse, #8ab4f8); --accent-fg: var(--color-text-inverse, #0b1a33); } }
:root[data-theme="dark"] { --bg: var(--color-background-primary, #1b1b1b); \
--fg: var(--color-text-primary, #ececec); --muted: var(--color-text-secondary, #b5b5b5); \
--line: var(--color-border-primary, #4a4a4a); --accent: var(--color-background-inverse, #8ab4f8); \
--accent-fg: var(--color-text-inverse, #0b1a33); }
[hidden] { display: none !important; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
body { margin: 0; padding: 16px; background: var(--bg); color: var(--fg); \
font-family: var(--font-sans, system-ui, -apple-system, "Segoe UI", sans-serif); \
font-size: var(--font-text-md-size, 15px); line-height: var(--font-text-md-line-height, 1.45); }
h1 { font-size: var(--font-heading-sm-size, 1.05rem); margin: 0 0 8px; }
h2 { font-size: var(--font-text-sm-size, .85rem); color: var(--muted); margin: 0 0 6px; }
p { margin: 0 0 10px; color: var(--muted); }
.card { margin: 0 0 12px; padding: 10px 12px; border: var(--border-width-regular, 1px) solid var(--line); \
border-radius: var(--border-radius-md, 6px); }
.question { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0; color: var(--fg); \
font-family: var(--font-mono, ui-monospace, monospace); font-size: var(--font-text-sm-size, 14px); }
.record { margin: 8px 0 0; color: var(--fg); font-weight: var(--font-weight-medium, 500); }
.record:empty { display: none; }
.actions { display: flex; gap: 10px; }
button { font: inherit; padding: 8px 18px; border-radius: var(--border-radius-md, 6px); \
border: 1px solid var(--line); background: transparent; color: var(--fg); cursor: pointer; }
button#approve { background: var(--accent); color: var(--accent-fg); border-color: var(--accent); }
button:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
button:disabled { opacity: .5; cursor: default; }
</style>
</head>
<body>
<main aria-labelledby="title">
<h1 id="title">Approve a change in Woodpecker CI?</h1>
<p id="what" hidden>Approve runs the open question's call once, exactly as shown. Decline, or no answer \
before it expires, runs nothing.</p>
<p id="idle">Waiting for the call to approve.</p>
<div id="questions"></div>
<div class="actions" id="actions" role="group" aria-label="Your answer" hidden>
<button type="button" id="approve" disabled>Approve</button>
<button type="button" id="decline" disabled>Decline</button>
</div>
<p id="status" class="sr" role="status" aria-live="polite"></p>
</main>
<script>
"use strict";
(function () {
  var META = "__META__", TOOL = "__TOOL__", CHECK = "__CHECK__";
  var SAY = {
    none: "Nothing here needs your approval.",
    cancelled: "The call was cancelled before it asked anything: nothing here needs your approval, \
and nothing was done.",
    checking: "Checking whether this question is still open\u2026",
    running: "Approved: running the call\u2026",
    declining: "Declining\u2026",
    expired: "Expired unanswered: nothing was done.",
    declined: "Declined: nothing was done.",
    approved: "Approved: the call was started; how it ended was not recorded.",
    ran: "Approved: the call ran once.",
    failed: "Approved: the call ended with an error. This view shows no reason, and whether it changed \
anything is not known here.",
    not_run: "Approved, but nothing was done: the call could not go ahead. This view shows no reason.",
    unsettled: "Approved, and the outcome is unknown: the request may have reached Woodpecker and no answer \
said how it went. Read what Woodpecker holds before approving this call again.",
    changed: "Not run: what the call would do changed before it ran, so a new question replaced this one.",
    unknown: "Closed: this server has no record of this question (it expired or was answered long ago, or \
the server restarted). Nothing can be answered here.",
    closed: "This answer did nothing: the question was closed already. ",
    then: " The new question: ",
    lost: "The host reported an error instead of this server's reply, so whether the call ran is unknown. \
Checking what this server recorded\u2026",
    lostNo: "The host reported an error instead of this server's reply. A Decline runs nothing. Checking \
what this server recorded\u2026",
    recorded: "The host reported an error, but this server recorded the answer. ",
    notYet: "The host reported an error, and this server has recorded no answer to this question yet: \
nothing was done so far. You can answer again.",
    unknownRan: "The host reported an error instead of this server's reply, so whether the call ran is \
unknown. Check in Woodpecker before asking for it again.",
    unknownNo: "The host reported an error instead of this server's reply. A Decline runs nothing."
  };
  var root = document.documentElement, list = document.getElementById("questions");
  var idle = document.getElementById("idle"), what = document.getElementById("what");
  var st = document.getElementById("status"), acts = document.getElementById("actions");
  var ok = document.getElementById("approve"), no = document.getElementById("decline");
  var nextId = 1, pending = {}, args = null, live = null, timer = null, fonts = null, seen = {};
  function send(msg) { window.parent.postMessage(msg, "*"); }
  function request(method, params) {
    var id = nextId++;
    send({ jsonrpc: "2.0", id: id, method: method, params: params });
    return new Promise(function (resolve, reject) { pending[id] = { resolve: resolve, reject: reject }; });
  }
  function check(c) { return request("tools/call", { name: CHECK, arguments: { ticket: c.ticket } }); }
  function known(r) {
    var s = r && !r.isError && r.structuredContent;
    return s && typeof s.state === "string" ? s : null;
  }
  function words(s) {
    var w = SAY[s.state] || SAY.unknown;
    return s.state === "changed" && SAY[s.then] ? w + SAY.then + SAY[s.then] : w;
  }
  function seconds(x) { x = Number(x); return x > 0 ? x : 300; }
  function offered(r) {
    var m = r && r._meta && r._meta[META];
    return m && typeof m.question === "string" && typeof m.ticket === "string" ? m : null;
  }
  function tell(c, text) { c.record.textContent = text; st.textContent = text; }
  function mark(c, state) { c.el.setAttribute("data-state", state); }
  function buttons() {
    var on = live !== null && args !== null;
    ok.disabled = !on; no.disabled = !on;
    what.hidden = live === null; acts.hidden = live === null;
  }
  function card(m, fresh) {
    var el = document.createElement("section"), h = document.createElement("h2");
    var q = document.createElement("pre"), r = document.createElement("p");
    el.className = "card"; q.className = "question"; r.className = "record";
    h.textContent = fresh ? "New question: what the call would do now" : "Question";
    q.textContent = m.question;
    el.appendChild(h); el.appendChild(q); el.appendChild(r); list.appendChild(el);
    idle.hidden = true; seen[m.ticket] = true;
    return { el: el, record: r, tool: String(m.tool), ticket: m.ticket };
  }
  function offer(c, ttl) {
    live = c; mark(c, "open"); tell(c, ""); buttons();
    clearTimeout(timer);
    timer = setTimeout(function () { if (live === c) { close(c, { state: "expired" }, ""); } }, ttl * 1000);
  }
  function close(c, s, before) {
    if (live === c) { live = null; clearTimeout(timer); }
    mark(c, "closed"); tell(c, before + words(s)); buttons();
  }
  function shown(result) {
    var m = offered(result);
    if (!m) { if (!list.firstChild) { idle.textContent = SAY.none; } return; }
    if (seen[m.ticket]) { return; }
    var c = card(m, false);
    mark(c, "checking"); tell(c, SAY.checking);
    check(c).then(function (r) {
      var s = known(r);
      if (s && s.state !== "open") { close(c, s, ""); } else { offer(c, seconds(s ? s.expires_in_seconds : m.expires_in_seconds)); }
    }, function () { offer(c, seconds(m.expires_in_seconds)); });
  }
  function settled(c, r, yes) {
    var s = (r && r.structuredContent) || {}, m = offered(r);
    if (m) { close(c, { state: "changed" }, ""); offer(card(m, true), seconds(m.expires_in_seconds)); }
    else if (s.outcome === "view_closed") { close(c, s, SAY.closed); }
    else if (!yes) { close(c, { state: "declined" }, ""); }
    else if (r && r.isError) { close(c, { state: s.outcome === "unknown" ? "unsettled" : s.done === false ? "not_run" : "failed" }, ""); }
    else { close(c, { state: "ran" }, ""); }
  }
  function lost(c, yes) {
    mark(c, "checking"); tell(c, yes ? SAY.lost : SAY.lostNo);
    function unknown() { mark(c, "unknown"); tell(c, yes ? SAY.unknownRan : SAY.unknownNo); }
    check(c).then(function (r) {
      var s = known(r);
      if (s && s.state === "open") { offer(c, seconds(s.expires_in_seconds)); tell(c, SAY.notYet); }
      else if (s && s.state !== "unknown") { close(c, s, SAY.recorded); }
      else { unknown(); }
    }, unknown);
  }
  function answer(yes) {
    var c = live;
    if (c === null || args === null) { return; }
    live = null; clearTimeout(timer); buttons(); mark(c, "sent");
    tell(c, yes ? SAY.running : SAY.declining);
    request("tools/call", { name: TOOL, arguments: { tool: c.tool, arguments: args, ticket: c.ticket,
      approve: yes } }).then(function (r) { settled(c, r, yes); }, function () { lost(c, yes); });
  }
  ok.addEventListener("click", function () { answer(true); });
  no.addEventListener("click", function () { answer(false); });
  function context(ctx) {
    if (!ctx || typeof ctx !== "object") { return; }
    if (ctx.theme === "dark" || ctx.theme === "light") { root.setAttribute("data-theme", ctx.theme); }
    var styles = ctx.styles || {}, vars = styles.variables, css = styles.css && styles.css.fonts;
    if (vars && typeof vars === "object") {
      Object.keys(vars).forEach(function (k) {
        if (/^--[A-Za-z0-9-]+$/.test(k) && typeof vars[k] === "string") { root.style.setProperty(k, vars[k]); }
      });
    }
    if (typeof css === "string" && fonts === null) {
      // The host's fonts, and nothing else of its CSS; what they would fetch, this page's CSP refuses.
      fonts = document.createElement("style"); fonts.textContent = css; document.head.appendChild(fonts);
      var rules = fonts.sheet ? fonts.sheet.cssRules : [];
      for (var i = rules.length - 1; i >= 0; i--) {
        if (!(window.CSSFontFaceRule && rules[i] instanceof window.CSSFontFaceRule)) { fonts.sheet.deleteRule(i); }
      }
    }
  }
  window.addEventListener("message", function (event) {
    if (event.source !== window.parent) { return; }
    var m = event.data;
    if (!m || m.jsonrpc !== "2.0") { return; }
    if (m.method === undefined) {
      var p = m.id !== undefined && pending[m.id];
      if (p) { delete pending[m.id]; if (m.error) { p.reject(m.error); } else { p.resolve(m.result); } }
      return;
    }
    if (m.method === "ui/notifications/tool-input") {
      var a = (m.params && m.params.arguments) || {}, copy = {};
      Object.keys(a).forEach(function (k) { if (k !== "confirm_token") { copy[k] = a[k]; } });
      args = copy; buttons();
    } else if (m.method === "ui/notifications/tool-result") {
      shown(m.params);
    } else if (m.method === "ui/notifications/tool-cancelled") {
      if (!list.firstChild) { idle.textContent = SAY.cancelled; }
    } else if (m.method === "ui/notifications/host-context-changed") {
      context(m.params);
    } else if (m.id !== undefined) {
      // ping and ui/resource-teardown need only an answer; any other request is not ours to serve.
      send(m.method === "ping" || m.method === "ui/resource-teardown" ? { jsonrpc: "2.0", id: m.id, result: {} }
        : { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
    }
  });
  request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "woodpecker-ci-approval",
    version: "2" }, appCapabilities: { availableDisplayModes: ["inline"] } }).then(function (r) {
    context(r && r.hostContext);
    send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    if (window.ResizeObserver) {
      new ResizeObserver(function () {
        var box = root.getBoundingClientRect();
        send({ jsonrpc: "2.0", method: "ui/notifications/size-changed",
          params: { width: Math.ceil(box.width), height: Math.ceil(box.height) } });
      }).observe(root);
    }
  }, function () { idle.textContent = "This host did not start the view; nothing can be approved here."; });
})();
</script>
</body>
</html>
"""

APPROVAL_VIEW_HTML = (
    _HTML.replace("__META__", APPROVAL_META_KEY)
    .replace("__TOOL__", APP_TOOL)
    .replace("__CHECK__", APP_STATE_TOOL)
)
