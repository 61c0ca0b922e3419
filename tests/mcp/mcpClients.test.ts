import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { CLIENT_INFO, connectClient, resultText, type ConnectedClient, type McpTransportKind } from "./mcpClient.ts";

// The SDK's own client against the compiled ./agentd, over Streamable HTTP (/mcp) and over stdio
// (`agentd mcp`, bridging to the same daemon): real commands in real PTYs, approvals decided
// through /api/approvals, a denial, a cancellation whose process must be gone afterwards.

const GATE = "agentd-mcp-gate";

let daemon: DaemonProcess;
let work: string;

beforeAll(async () => {
  await ensureBinary();
  work = makeTempDir("agentd-mcp-work-");
  // The commands run as the command user (agentd starts as root here): they write there.
  chmodSync(work, 0o777);
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-mcp-data-"),
    config: {
      agent: { progress_interval_ms: 200 },
      // exec asks for any command that carries the gate; everything else runs at once.
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
    },
  });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

interface PendingApproval {
  id: string;
  session_id: string;
  scope: string;
  summary: string;
}

async function pendingApproval(tag: string): Promise<PendingApproval> {
  return waitFor(
    `an approval for ${tag}`,
    async () => (await api<{ approvals: PendingApproval[] }>(daemon.url, "/api/approvals")).approvals.find((a) => a.summary.includes(tag)),
    { timeoutMs: 30_000, intervalMs: 50 },
  );
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : []);

describe.each(["http", "stdio"] as McpTransportKind[])("MCP over %s against ./agentd", (kind) => {
  let connected: ConnectedClient;

  beforeAll(async () => {
    connected = await connectClient(kind, daemon.url);
  }, 60_000);

  afterAll(async () => {
    await connected?.close();
    if (connected?.bridgePid) await waitFor("agentd mcp to exit", () => !isProcessAlive(connected.bridgePid!), { timeoutMs: 15_000 });
  }, 30_000);

  test("lists the tools with their schemas, hints and target", async () => {
    const { tools } = await connected.client.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      "exec_command",
      "write_stdin",
      "list_sessions",
      "close_session",
      "read_file",
      "write_file",
      "list_incidents",
      "get_incident",
      "service_status",
      "restart_service",
      "get_call_result",
    ])
      expect(names).toContain(name);
    expect(names).not.toContain("hop");
    const exec = tools.find((t) => t.name === "exec_command")!;
    expect(exec.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: false });
    expect(Object.keys(exec.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["cmd", "yield_time_ms", "target"]));
    expect(exec.inputSchema.required).toEqual(["cmd"]);
    expect(tools.find((t) => t.name === "read_file")!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    expect(tools.find((t) => t.name === "list_incidents")!.inputSchema.properties).not.toHaveProperty("target");
    expect(connected.client.getServerVersion()?.name).toBe("agentd");
  });

  test("exec_command runs a command on the host", async () => {
    const marker = join(work, `exec-${kind}`);
    const result = await connected.client.callTool({
      name: "exec_command",
      arguments: { cmd: `echo made > ${marker}; echo hello-from-${kind}` },
    });
    expect(result.isError).toBeFalsy();
    expect(resultText(result)).toContain(`hello-from-${kind}`);
    expect(JSON.parse(resultText(result))).toMatchObject({ running: false, exit_code: 0 });
    expect(readFileSync(marker, "utf8").trim()).toBe("made");
  });

  test("drives python3 -i with write_stdin", async () => {
    const started = JSON.parse(
      resultText(await connected.client.callTool({ name: "exec_command", arguments: { cmd: "python3 -i -q", yield_time_ms: 1500 } })),
    ) as { session_id: string; running: boolean };
    expect(started.running).toBe(true);
    const answered = await connected.client.callTool({
      name: "write_stdin",
      arguments: { session_id: started.session_id, chars: "print(6 * 7)\n", yield_time_ms: 1500 },
    });
    expect(resultText(answered)).toContain("42");
    const listed = JSON.parse(resultText(await connected.client.callTool({ name: "list_sessions", arguments: {} }))) as {
      sessions: Array<{ id: string; running: boolean }>;
    };
    expect(listed.sessions.find((s) => s.id === started.session_id)?.running).toBe(true);
    const ended = JSON.parse(
      resultText(
        await connected.client.callTool({
          name: "write_stdin",
          arguments: { session_id: started.session_id, chars: "exit()\n", yield_time_ms: 3000 },
        }),
      ),
    ) as { running: boolean; exit_code: number };
    expect(ended).toMatchObject({ running: false, exit_code: 0 });
  });

  test("a call that needs approval waits with progress and returns after allow_once", async () => {
    const log = join(work, `approved-${kind}.log`);
    const tag = `${GATE}-allow-${kind}`;
    const progress: string[] = [];
    const call = connected.client.callTool({ name: "exec_command", arguments: { cmd: `echo ran >> ${log} # ${tag}` } }, undefined, {
      onprogress: (p) => progress.push(p.message ?? ""),
    });
    const approval = await pendingApproval(tag);
    expect(approval.scope).toBe("exec");
    await waitFor("a progress notification", () => progress.length > 0);
    expect(progress[0]).toContain(approval.id);
    expect(lines(log)).toEqual([]);
    const decided = await api<{ approval: { status: string } }>(daemon.url, `/api/approvals/${approval.id}`, {
      body: { decision: "allow_once" },
    });
    expect(decided.approval.status).toBe("allow_once");
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(resultText(result))).toMatchObject({ exit_code: 0 });
    expect(lines(log)).toEqual(["ran"]);
    // Exactly once: a second decision is refused and nothing runs again.
    await api(daemon.url, `/api/approvals/${approval.id}`, { body: { decision: "allow_once" }, expect: 409 });
    expect(lines(log)).toEqual(["ran"]);
  });

  test("a command that runs sudo is asked in the sudo scope, as the agent's are; allowed, only a bare sudo starts without no_new_privs", async () => {
    const tag = `sudo-scope-${kind}`;
    // The quotes make the redactor swallow the middle of the summary: the card must show the raw command.
    const cmd = `grep NoNewPrivs /proc/self/status; sudo -n true; echo 'API_KEY="'; echo ${tag}; echo '"'`;
    const call = connected.client.callTool({ name: "exec_command", arguments: { cmd } });
    // The tag itself is inside what the summary redacts.
    const approval = await pendingApproval(`sudo -n true; echo 'API_KEY=`);
    expect(approval.scope).toBe("sudo");
    const shown = (
      await api<{ approvals: Array<{ id: string; command?: string; reasons?: string[] }> }>(daemon.url, "/api/approvals")
    ).approvals.find((a) => a.id === approval.id);
    expect(shown?.command).toBe(cmd);
    expect(shown?.reasons?.join(" ")).toContain("sudo");
    await api(daemon.url, `/api/approvals/${approval.id}`, { body: { decision: "allow_once" } });
    // Allowed, but more than sudo alone: it runs confined.
    expect(JSON.parse(resultText(await call)).output).toMatch(/NoNewPrivs:\s+1/);

    const bare = connected.client.callTool({ name: "exec_command", arguments: { cmd: "sudo -n grep NoNewPrivs /proc/self/status" } });
    const asked = await pendingApproval("sudo -n grep NoNewPrivs");
    await api(daemon.url, `/api/approvals/${asked.id}`, { body: { decision: "allow_once" } });
    // sudo itself ran without no_new_privs: its root grep reports the flag clear.
    expect(JSON.parse(resultText(await bare)).output).toMatch(/NoNewPrivs:\s+0/);
  });

  test("a denied call returns a tool error the model can read", async () => {
    const log = join(work, `denied-${kind}.log`);
    const tag = `${GATE}-deny-${kind}`;
    const call = connected.client.callTool({ name: "exec_command", arguments: { cmd: `echo ran >> ${log} # ${tag}` } });
    const approval = await pendingApproval(tag);
    await api(daemon.url, `/api/approvals/${approval.id}`, { body: { decision: "deny" } });
    const result = await call;
    expect(result.isError).toBe(true);
    expect(resultText(result)).toBe("denied by the user: exec_command was not run");
    expect(lines(log)).toEqual([]);
  });

  test("a cancelled call stops its command: the process is gone", async () => {
    const pidFile = join(work, `cancel-${kind}.pid`);
    const controller = new AbortController();
    const call = connected.client.callTool(
      { name: "exec_command", arguments: { cmd: `echo $$ > ${pidFile}; exec sleep 300`, yield_time_ms: 30_000 } },
      undefined,
      { signal: controller.signal },
    );
    const pid = await waitFor("the command's pid", () => (lines(pidFile)[0] ? Number(lines(pidFile)[0]) : undefined));
    expect(isProcessAlive(pid)).toBe(true);
    controller.abort("the user pressed stop");
    await expect(call).rejects.toThrow();
    await waitFor("the cancelled command to be gone", () => !isProcessAlive(pid), { timeoutMs: 15_000 });
  });

  test("a client gone while its call waits leaves the approval pending and its result readable", async () => {
    const log = join(work, `detached-${kind}.log`);
    const tag = `${GATE}-detach-${kind}`;
    const progress: string[] = [];
    const first = await connectClient(kind, daemon.url);
    const call = first.client
      .callTool({ name: "exec_command", arguments: { cmd: `echo ran >> ${log} # ${tag}` } }, undefined, {
        onprogress: (p) => progress.push(p.message ?? ""),
      })
      .catch((error: unknown) => error);
    const approval = await pendingApproval(tag);
    await waitFor("a progress notification", () => progress.length > 0);
    const callId = /call (mcp_[0-9a-f]+)/.exec(progress[0]!)![1]!;
    await first.close();
    await call;
    if (first.bridgePid) await waitFor("agentd mcp to exit", () => !isProcessAlive(first.bridgePid!), { timeoutMs: 15_000 });
    const still = await api<{ approvals: PendingApproval[] }>(daemon.url, "/api/approvals");
    expect(still.approvals.map((a) => a.id)).toContain(approval.id);
    await api(daemon.url, `/api/approvals/${approval.id}`, { body: { decision: "allow_once" } });
    const result = await connected.client.callTool({ name: "get_call_result", arguments: { call_id: callId, wait_s: 20 } });
    expect(result.isError).toBeFalsy();
    expect(JSON.parse(resultText(result))).toMatchObject({ exit_code: 0 });
    expect(lines(log)).toEqual(["ran"]);
    const resource = await connected.client.readResource({ uri: `agentd://calls/${callId}` });
    expect(JSON.parse((resource.contents[0] as { text: string }).text)).toMatchObject({
      call_id: callId,
      status: "finished",
      outcome: "ok",
    });
  });

  test("every call is on record: session with its client, status page, /metrics, sidecar", async () => {
    const { sessions } = await api<{ sessions: Array<{ id: string; kind: string; client: string; title: string }> }>(
      daemon.url,
      "/api/sessions",
    );
    const mine = sessions.filter((s) => s.kind === "mcp" && s.client === `${CLIENT_INFO.name} ${CLIENT_INFO.version}`);
    expect(mine.length).toBeGreaterThan(0);
    const views = await Promise.all(
      mine.map((s) => api<{ tool_calls: Array<{ tool: string; outcome: string | null }> }>(daemon.url, `/api/sessions/${s.id}`)),
    );
    const outcomes = views.flatMap((v) => v.tool_calls.map((c) => `${c.tool}:${c.outcome}`));
    expect(outcomes).toEqual(
      expect.arrayContaining(["exec_command:ok", "write_stdin:ok", "exec_command:denied", "exec_command:cancelled"]),
    );
    const page = await (await fetch(`${daemon.url}/status`, { headers: { accept: "*/*" } })).text();
    expect(page).toContain(`MCP ${CLIENT_INFO.name} ${CLIENT_INFO.version}`);
    const metrics = await (await fetch(`${daemon.url}/metrics`)).text();
    expect(metrics).toMatch(/agentd_mcp_tool_calls_total\{tool="exec_command",outcome="ok"\} \d+/);
    expect(metrics).toMatch(/agentd_mcp_tool_calls_total\{tool="exec_command",outcome="denied"\} \d+/);
    const sidecars = readdirSync(join(daemon.dataDir, "debug"));
    for (const s of mine) {
      const file = sidecars.find((name) => name.startsWith(`session_${s.id}`));
      expect(file).toBeDefined();
    }
    const text = mine.map((s) => readFileSync(join(daemon.dataDir, "debug", `session_${s.id}.debug.jsonl`), "utf8")).join("\n");
    expect(text).toContain('"tool.end"');
    expect(text).toContain('"approval.decided"');
  });
});

describe("resources and prompts", () => {
  test("the status snapshot and incidents are resources; diagnose_incident needs an incident", async () => {
    const connected = await connectClient("http", daemon.url);
    try {
      const { resources } = await connected.client.listResources();
      expect(resources.map((r) => r.uri)).toEqual(["agentd://status", "agentd://incidents"]);
      const status = JSON.parse(((await connected.client.readResource({ uri: "agentd://status" })).contents[0] as { text: string }).text);
      expect(status).toHaveProperty("health");
      const incidents = JSON.parse(
        ((await connected.client.readResource({ uri: "agentd://incidents" })).contents[0] as { text: string }).text,
      );
      expect(incidents).toHaveProperty("incidents");
      const { prompts } = await connected.client.listPrompts();
      expect(prompts.map((p) => p.name)).toEqual(["diagnose_incident"]);
      await expect(connected.client.getPrompt({ name: "diagnose_incident", arguments: { incident_id: "999" } })).rejects.toThrow(/999/);
    } finally {
      await connected.close();
    }
  });
});
