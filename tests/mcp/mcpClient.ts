import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AGENTD, cleanEnv } from "../support/binary.ts";

export type McpTransportKind = "http" | "stdio";

export interface ConnectedClient {
  client: Client;
  /** The pid of `agentd mcp` (stdio only). */
  bridgePid: number | null;
  /** What `agentd mcp` wrote to stderr. */
  bridgeStderr(): string;
  close(): Promise<void>;
}

export const CLIENT_INFO = { name: "agentd-test-client", version: "1.2.3" };

/** The SDK's client, over Streamable HTTP to /mcp, or over stdio through the compiled `./agentd mcp`. */
export async function connectClient(kind: McpTransportKind, daemonUrl: string, clientInfo = CLIENT_INFO): Promise<ConnectedClient> {
  const client = new Client(clientInfo, { capabilities: {} });
  let stderr = "";
  if (kind === "http") {
    await client.connect(new StreamableHTTPClientTransport(new URL(`${daemonUrl}/mcp`)));
    return { client, bridgePid: null, bridgeStderr: () => "", close: () => client.close() };
  }
  const transport = new StdioClientTransport({
    command: AGENTD,
    args: ["mcp", "--url", daemonUrl],
    env: cleanEnv(),
    stderr: "pipe",
  });
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await client.connect(transport);
  return { client, bridgePid: transport.pid, bridgeStderr: () => stderr, close: () => client.close() };
}

/** The text of a tool result's content. */
export function resultText(result: unknown): string {
  return ((result as CallToolResult).content ?? []).map((part) => (part.type === "text" ? part.text : "")).join("");
}
