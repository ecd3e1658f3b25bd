// What a web host loads to show an MCP Apps view: the ext-apps AppBridge and its postMessage
// transport, bundled for the page (tests/fixtures/apps_host.py) and exposed as window.McpAppsHost.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.McpAppsHost = { AppBridge, PostMessageTransport };
