import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { startSshd, type TestSshd } from "../support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { preinstallAgentd, stopRemoteAgentd } from "../support/remoteAgentd.ts";
import { api, startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { connectClient, resultText, type ConnectedClient } from "./mcpClient.ts";

// An MCP call with target = a hop runs on the hop: ./agentd opens a hop to a real sshd (this
// machine under another HOME), and the SDK's client runs exec_command and read_file there.
// Aiming at a hop passes the hop scope too (ask by default), decided through /api/approvals.

const REMOTE_NOTE = "only in the remote home\n";

let sshd: TestSshd;
let daemon: DaemonProcess;
let remoteHome: string;
let connected: ConnectedClient;

beforeAll(async () => {
  await ensureBinary();
  remoteHome = makeTempDir("agentd-mcphop-remote-");
  // The remote agentd runs as root there, its tools as its command user: they may read the note.
  chmodSync(remoteHome, 0o755);
  writeFileSync(join(remoteHome, "remote-note.txt"), REMOTE_NOTE, { mode: 0o644 });
  sshd = await startSshd({ env: { HOME: remoteHome } });
  await preinstallAgentd(join(remoteHome, ".agentd"));
  const local = makeTempDir("agentd-mcphop-local-");
  const knownHosts = join(local, "known_hosts");
  writeFileSync(knownHosts, `${sshd.knownHostsLine}\n`);
  daemon = await startDaemon({
    dataDir: local,
    config: { hops: { known_hosts: knownHosts, identity_files: [join(local, "hop_ed25519")], use_agent: false } },
  });
  // The key as an operator keeps it for agentd: the worker's own (it runs as the service user and
  // cannot read the test's key). Read at each connection, so in time for the hop below.
  const key = join(local, "hop_ed25519");
  copyFileSync(sshd.clientKeyPath, key);
  const worker = statSync(`/proc/${daemon.workerPid()}`);
  chownSync(key, worker.uid, worker.gid);
  const response = await fetch(`${daemon.url}/api/hops`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ destination: `${sshd.user}@127.0.0.1:${sshd.port}`, name: "remote" }),
    signal: AbortSignal.timeout(240_000),
  });
  // The body names the cause when the hop does not open.
  expect({ status: response.status, body: await response.json() }).toMatchObject({ status: 201 });
  connected = await connectClient("http", daemon.url);
}, 300_000);

afterAll(async () => {
  await connected?.close();
  await daemon?.stop();
  if (remoteHome) await stopRemoteAgentd(remoteHome);
  await sshd?.stop();
  removeTempDirs();
}, 120_000);

describe("MCP calls aimed at a hop", () => {
  test("exec_command with target runs on the hop after the hop scope is allowed; read_file follows", async () => {
    const call = connected.client.callTool({
      name: "exec_command",
      arguments: { cmd: 'echo "cwd is $(pwd)" # mcp-hop-marker', target: "remote" },
    });
    const approval = await waitFor(
      "the hop approval",
      async () =>
        (await api<{ approvals: Array<{ id: string; scope: string; summary: string }> }>(daemon.url, "/api/approvals")).approvals.find(
          (a) => a.summary.includes("mcp-hop-marker"),
        ),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    expect(approval.scope).toBe("hop");
    expect(approval.summary).toEndWith("on remote");
    // allow_session grants the hop scope to this MCP session: the next hop call does not ask.
    await api(daemon.url, `/api/approvals/${approval.id}`, { body: { decision: "allow_session" } });
    const result = await call;
    expect(result.isError).toBeFalsy();
    // The remote agentd's working directory (its HOME): the command ran there, as its command user.
    expect(resultText(result)).toContain(`cwd is ${remoteHome}`);

    const read = await connected.client.callTool({
      name: "read_file",
      arguments: { path: join(remoteHome, "remote-note.txt"), target: "remote" },
    });
    expect(resultText(read)).toContain(REMOTE_NOTE.trim());
    const local = await connected.client.callTool({ name: "exec_command", arguments: { cmd: 'echo "cwd is $(pwd)"' } });
    expect(resultText(local)).toContain(`cwd is ${process.cwd()}`);
  }, 120_000);

  test("a target that is not a connected hop is a tool error at once, not a question", async () => {
    // A new MCP session: no hop grant from the test above.
    const fresh = await connectClient("http", daemon.url);
    try {
      const result = await fresh.client.callTool({ name: "exec_command", arguments: { cmd: "true", target: "nowhere" } });
      expect(result.isError).toBe(true);
      expect(resultText(result)).toContain("No hop named nowhere");
      const { approvals } = await api<{ approvals: Array<{ summary: string }> }>(daemon.url, "/api/approvals");
      expect(approvals.filter((a) => a.summary.includes("nowhere"))).toEqual([]);
    } finally {
      await fresh.close();
    }
  }, 60_000);
});
