import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AGENTD, cleanEnv, ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { CLIENT_INFO, resultText } from "./mcpClient.ts";

// /mcp behind the bearer token, as /api: refused without it, served with it; `agentd mcp` finds
// the local daemon and its token by the data dir (ready.json and <data_dir>/token), like `agentd approve`.

let daemon: DaemonProcess;
let token: string;

beforeAll(async () => {
  await ensureBinary();
  daemon = await startDaemon({ dataDir: makeTempDir("agentd-mcp-token-"), config: { server: { require_token: true } } });
  token = readFileSync(join(daemon.dataDir, "token"), "utf8").trim();
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

describe("/mcp with a required token", () => {
  test("an initialize without the token is refused with 401, as on /api", async () => {
    const response = await fetch(`${daemon.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: CLIENT_INFO },
      }),
    });
    expect(response.status).toBe(401);
  });

  test("the SDK client with the bearer token is served", async () => {
    const client = new Client(CLIENT_INFO);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    );
    try {
      const result = await client.callTool({ name: "exec_command", arguments: { cmd: "echo with-token" } });
      expect(resultText(result)).toContain("with-token");
    } finally {
      await client.close();
    }
  });

  test("agentd mcp --data-dir finds the daemon and its token", async () => {
    const client = new Client(CLIENT_INFO);
    const transport = new StdioClientTransport({
      command: AGENTD,
      args: ["mcp", "--data-dir", daemon.dataDir],
      env: cleanEnv(),
      stderr: "pipe",
    });
    await client.connect(transport);
    try {
      const result = await client.callTool({ name: "exec_command", arguments: { cmd: "echo over-stdio-with-token" } });
      expect(resultText(result)).toContain("over-stdio-with-token");
    } finally {
      await client.close();
    }
  });
});
