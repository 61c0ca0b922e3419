import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { errorMessage } from "../../core/errors/index.ts";
import type { Command } from "../command.ts";
import { DAEMON_LOCATION_HELP, DAEMON_OPTIONS, daemonTargetFrom } from "../daemonClient.ts";

/** One line on stderr: stdout carries the protocol. */
function note(event: string, fields: Record<string, unknown>): void {
  process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), level: "warn", component: "mcp-stdio", event, ...fields })}\n`);
}

function requestId(message: JSONRPCMessage): RequestId | undefined {
  return "method" in message && "id" in message ? message.id : undefined;
}

/**
 * `agentd mcp`: MCP over stdio for clients that start their servers themselves. A thin bridge to
 * the running daemon's /mcp, so approvals, records and sidecars live in the daemon, as over HTTP.
 */
export const mcpCommand: Command = {
  path: ["mcp"],
  summary: "Serve agentd's tools over MCP on stdio, through the running daemon's /mcp (for MCP clients).",
  usage: "agentd mcp [--url URL] [--token TOKEN]",
  options: { ...DAEMON_OPTIONS },
  help: [
    "      --url URL         agentd to serve from (default: AGENTD_URL, the local daemon's ready file, http://127.0.0.1:7070)",
    ...DAEMON_LOCATION_HELP,
  ],
  async run({ values }) {
    const target = daemonTargetFrom(values);
    const endpoint = new URL(`${target.url}/mcp`);
    const http = new StreamableHTTPClientTransport(endpoint, {
      requestInit: { headers: target.token ? { authorization: `Bearer ${target.token}` } : {} },
    });
    const stdio = new StdioServerTransport();
    let initializeId: RequestId | undefined;
    const { promise: ended, resolve: end } = Promise.withResolvers<void>();

    stdio.onmessage = (message) => {
      if ("method" in message && message.method === "initialize") initializeId = requestId(message);
      http.send(message).catch((error: unknown) => {
        const id = requestId(message);
        note("mcp.daemon_unreachable", { url: endpoint.href, error: errorMessage(error) });
        // A request the daemon never got is answered, so the client does not wait for ever.
        if (id === undefined) return;
        return stdio
          .send({
            jsonrpc: "2.0",
            id,
            error: { code: -32603, message: `agentd at ${target.url} did not take the request: ${errorMessage(error)}` },
          })
          .catch((sendError: unknown) => note("mcp.client_unreachable", { error: errorMessage(sendError) }));
      });
    };
    http.onmessage = (message) => {
      if (initializeId !== undefined && "id" in message && message.id === initializeId && "result" in message) {
        const version = (message.result as { protocolVersion?: unknown }).protocolVersion;
        if (typeof version === "string") http.setProtocolVersion(version);
      }
      // A reply the client can no longer take (its stdin closed) is noted, not left unhandled.
      stdio.send(message).catch((error: Error) => note("mcp.stdio_send_failed", { error: error.message }));
    };
    http.onerror = (error) => note("mcp.daemon_error", { url: endpoint.href, error: error.message });
    stdio.onerror = (error) => note("mcp.stdio_error", { error: error.message });
    stdio.onclose = () => end();
    process.stdin.once("end", () => end());

    await http.start();
    await stdio.start();
    await ended;
    // Ends the daemon's MCP session; calls waiting for a decision stay pending there.
    await http.terminateSession().catch((error: unknown) => note("mcp.terminate_failed", { error: errorMessage(error) }));
    await http.close();
    return 0;
  },
};
