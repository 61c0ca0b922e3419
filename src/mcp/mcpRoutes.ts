import { Hono } from "hono";
import type { Logger } from "../core/log/index.ts";
import { runInBackground } from "../core/process/index.ts";
import type { ConnectionDeps, McpConnection } from "./mcpConnection.ts";

// The MCP SDK (and the ajv it brings) loads with the first session: a worker no MCP client uses
// does not carry it (some 10 MB).
let connectionModule: Promise<typeof import("./mcpConnection.ts")> | undefined;

export interface McpRoutes {
  app: Hono;
  /** Open MCP sessions. */
  size(): number;
  close(): Promise<void>;
}

/** A JSON-RPC error answer outside any session (the SDK's own shape for these cases). */
function rpcError(status: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status });
}

/**
 * Streamable HTTP at /mcp: an initialize without a session id opens a session (its id comes back
 * in Mcp-Session-Id); later requests name it. Sessions idle past `idleMs` with no call in flight
 * are closed, as are all of them when agentd stops; the calls they made stay on record.
 */
export function createMcpRoutes(deps: ConnectionDeps & { idleMs: number; logger: Logger }): McpRoutes {
  const sessions = new Map<string, McpConnection>();
  const hooks = {
    opened: (id: string, connection: McpConnection) => sessions.set(id, connection),
    closed: (id: string) => sessions.delete(id),
  };
  const closeQuietly = (connection: McpConnection, why: string) =>
    runInBackground("mcp.session_close", () => connection.close(), { why, mcp_session: connection.transport.sessionId }, deps.logger);
  const reaper = setInterval(
    () => {
      for (const connection of sessions.values()) if (connection.idleFor(deps.idleMs)) closeQuietly(connection, "idle");
    },
    Math.min(60_000, deps.idleMs),
  );
  reaper.unref();

  const app = new Hono();
  app.all("/", async (c) => {
    const id = c.req.header("mcp-session-id");
    if (id) {
      const connection = sessions.get(id);
      if (!connection) return rpcError(404, `No MCP session ${id} (it ended or agentd restarted); initialize a new one`);
      connection.touch();
      return connection.transport.handleRequest(c.req.raw);
    }
    if (c.req.method !== "POST") return rpcError(400, "Without an Mcp-Session-Id header, only an initialize request (POST) is served");
    connectionModule ??= import("./mcpConnection.ts");
    const { McpConnection } = await connectionModule;
    const connection: McpConnection = new McpConnection(deps, {
      opened: (sessionId) => hooks.opened(sessionId, connection),
      closed: hooks.closed,
    });
    await connection.connect();
    const response = await connection.transport.handleRequest(c.req.raw);
    // Anything but a valid initialize leaves no session behind.
    if (!connection.transport.sessionId) closeQuietly(connection, "not_initialized");
    return response;
  });

  return {
    app,
    size: () => sessions.size,
    async close() {
      clearInterval(reaper);
      await Promise.all([...sessions.values()].map((connection) => connection.close()));
      sessions.clear();
    },
  };
}
