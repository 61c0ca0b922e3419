import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AGENTD, ensureBinary, PROJECT_ROOT } from "../support/binary.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";

// The Codex CLI as a real MCP client of ./agentd: its model (the scripted upstream, speaking the
// Responses API) calls agentd's exec_command through [mcp_servers.agentd], over Streamable HTTP
// (url) and over stdio (command = ./agentd mcp). The command runs on this host and its output
// comes back to Codex. Codex talks to loopback only: every other address goes to a dead proxy.

const CODEX = join(PROJECT_ROOT, "node_modules", ".bin", "codex");
const GATE = "agentd-codex-gate";

let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let work: string;

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream({ wires: ["responses"] });
  work = makeTempDir("agentd-codex-work-");
  // The commands run as the command user (agentd starts as root here): they write there.
  chmodSync(work, 0o777);
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-codex-data-"),
    config: { agent: { progress_interval_ms: 500 }, approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] } },
  });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

type Transport = "http" | "stdio";

function serverBlock(transport: Transport): string {
  const where = transport === "http" ? `url = "${daemon.url}/mcp"` : `command = "${AGENTD}"\nargs = ["mcp", "--url", "${daemon.url}"]`;
  // agentd asks its own operator; Codex is told not to ask a second time.
  return `[mcp_servers.agentd]\n${where}\ndefault_tools_approval_mode = "approve"\ntool_timeout_sec = 120\n`;
}

interface CodexRun {
  code: number;
  events: Array<Record<string, any>>;
  stderr: string;
}

/** `codex exec --json` in a temp HOME/CODEX_HOME, its model the scripted upstream; killed by pid past 90 s. */
async function runCodex(transport: Transport, prompt: string): Promise<CodexRun> {
  const home = makeTempDir("agentd-codex-home-");
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome);
  writeFileSync(
    join(codexHome, "config.toml"),
    [
      'model = "gpt-test"',
      'model_provider = "scripted"',
      "[model_providers.scripted]",
      'name = "scripted"',
      `base_url = "${upstream.url}"`,
      'wire_api = "responses"',
      serverBlock(transport),
    ].join("\n"),
  );
  const dead = "http://127.0.0.1:9";
  const child = Bun.spawn([CODEX, "exec", "--json", "--skip-git-repo-check", "-s", "read-only", prompt], {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      CODEX_HOME: codexHome,
      HTTP_PROXY: dead,
      HTTPS_PROXY: dead,
      ALL_PROXY: dead,
      NO_PROXY: "127.0.0.1,localhost",
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  try {
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    const events = stdout
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, any>);
    return { code, events, stderr };
  } finally {
    clearTimeout(timer);
  }
}

const mcpCalls = (run: CodexRun) =>
  run.events.filter((e) => e.type === "item.completed" && e.item?.type === "mcp_tool_call").map((e) => e.item);

describe.each(["http", "stdio"] as Transport[])("Codex CLI → agentd over %s", (transport) => {
  test("its model calls exec_command through MCP: the command runs on the host and the result reaches Codex", async () => {
    const marker = join(work, `codex-${transport}`);
    const seen = upstream.completionRequests().length;
    upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          {
            id: `call_${transport}`,
            name: "exec_command",
            namespace: "mcp__agentd",
            arguments: JSON.stringify({ cmd: `echo codex-${transport} > ${marker}; echo result-for-codex-${transport}` }),
          },
        ],
      },
      { kind: "text", text: `done over ${transport}` },
    );
    const run = await runCodex(transport, "run the command");
    expect(run.code).toBe(0);
    expect(readFileSync(marker, "utf8").trim()).toBe(`codex-${transport}`);
    const [call] = mcpCalls(run);
    expect(call).toMatchObject({ server: "agentd", tool: "exec_command", status: "completed" });
    expect(call.result.content[0].text).toContain(`result-for-codex-${transport}`);
    // Codex sent the output back to its model, and ended with the model's answer.
    const followUp = upstream.completionRequests()[seen + 1]!;
    const output = followUp.body.input.find((item: any) => item.type === "function_call_output" && item.call_id === `call_${transport}`);
    expect(JSON.stringify(output.output)).toContain(`result-for-codex-${transport}`);
    expect(run.events.find((e) => e.type === "item.completed" && e.item?.type === "agent_message")?.item.text).toBe(
      `done over ${transport}`,
    );
    // On agentd's record, under Codex's name.
    const { sessions } = await api<{ sessions: Array<{ kind: string; client: string | null }> }>(daemon.url, "/api/sessions");
    expect(sessions.some((s) => s.kind === "mcp" && /codex/i.test(s.client ?? ""))).toBe(true);
  }, 120_000);

  test("a call agentd's policy gates waits for the operator; Codex gets the result after allow_once", async () => {
    const log = join(work, `codex-gated-${transport}.log`);
    const tag = `${GATE}-${transport}`;
    upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          {
            id: `gated_${transport}`,
            name: "exec_command",
            namespace: "mcp__agentd",
            arguments: JSON.stringify({ cmd: `echo ran >> ${log}; echo gated-ok # ${tag}` }),
          },
        ],
      },
      { kind: "text", text: "gated done" },
    );
    const running = runCodex(transport, "run the gated command");
    const approval = await waitFor(
      "the approval Codex's call waits on",
      async () =>
        (await api<{ approvals: Array<{ id: string; summary: string }> }>(daemon.url, "/api/approvals")).approvals.find((a) =>
          a.summary.includes(tag),
        ),
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(existsSync(log)).toBe(false);
    await api(daemon.url, `/api/approvals/${approval.id}`, { body: { decision: "allow_once" } });
    const run = await running;
    expect(run.code).toBe(0);
    expect(readFileSync(log, "utf8")).toBe("ran\n");
    const [call] = mcpCalls(run);
    expect(call.status).toBe("completed");
    expect(call.result.content[0].text).toContain("gated-ok");
  }, 120_000);
});
