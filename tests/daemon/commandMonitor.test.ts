import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ptr } from "bun:ffi";
import { chmodSync, chownSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { approvalsConfigSchema } from "../../src/core/config/sections/approvalsConfig.ts";
import { ptyConfigSchema } from "../../src/core/config/sections/ptyConfig.ts";
import { createLogger } from "../../src/core/log/index.ts";
import type { CommandIdentity } from "../../src/core/process/index.ts";
import { type Database, openStore } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { CommandMonitor } from "../../src/daemon/monitor/commandMonitor.ts";
import type { MonitorReply, MonitorRequest } from "../../src/daemon/monitor/monitorProtocol.ts";
import { libc } from "../../src/pty/libcBindings.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";

// agentd's privileged monitor against a worker that asks for what it should not get: it reads the
// approval from the store itself, opens only the worker's own terminals, touches only the processes
// it started, and keeps agentd's files out of the file tools' reach. Needs root (it starts commands
// as another user), as the monitor does.

const NOBODY: CommandIdentity = {
  mode: "command_user",
  user: "nobody",
  credentials: { uid: 65534, gid: 65534, groups: [65534] },
  home: "/",
  problems: [],
};
const TOKEN = "monitor-test-token-0123456789";

let dir: string;
let db: Database;
let monitor: CommandMonitor;
let nextId = 1;
const terminals: number[] = [];
let reloads = 0;

async function ask(request: MonitorRequest): Promise<MonitorReply> {
  const reply = await monitor.handle({ id: nextId++, request });
  if (!reply) throw new Error("no reply");
  return reply;
}

async function value<T>(request: MonitorRequest): Promise<T> {
  const reply = await ask(request);
  if (!reply.ok) throw new Error(`${reply.error.code}: ${reply.error.message}`);
  return reply.value as T;
}

async function refusal(request: MonitorRequest): Promise<{ code: string; message: string }> {
  const reply = await ask(request);
  if (reply.ok) throw new Error(`expected a refusal, got ${JSON.stringify(reply.value)}`);
  return reply.error;
}

/** A terminal of this process's own (as the worker opens one): its slave's path. */
function openTerminal(): string {
  const c = libc();
  const fds = new Int32Array(2);
  if (c.openpty(ptr(fds), ptr(fds, 4), null, null, null) !== 0) throw new Error("openpty failed");
  terminals.push(fds[0]!, fds[1]!);
  const name = new Uint8Array(256);
  c.ptsname_r(fds[0]!, name, name.length);
  return Buffer.from(name.subarray(0, name.indexOf(0))).toString("utf8");
}

/** A session with one exec_command call in the state a turn leaves it in. */
function recordCall(cmd: string, options: { approval?: string; status?: string; policy?: object; grant?: boolean } = {}) {
  const session = `s${nextId++}`;
  const record = `r${nextId++}`;
  const now = Date.now();
  db.query("INSERT INTO agent_sessions (id, created_at, updated_at, model, policy) VALUES (?, ?, ?, 'm', ?)").run(
    session,
    now,
    now,
    JSON.stringify(options.policy ?? {}),
  );
  const approvalId = options.approval ? `a${nextId++}` : null;
  db.query(
    "INSERT INTO agent_tool_calls (id, session_id, turn_id, step, ordinal, call_id, tool, scope, arguments, status, approval_id, created_at) VALUES (?, ?, 't', 1, 0, 'c', 'exec_command', 'exec', ?, ?, ?, ?)",
  ).run(record, session, JSON.stringify({ cmd }), options.status ?? "running", approvalId, now);
  if (approvalId)
    db.query(
      "INSERT INTO agent_approvals (id, session_id, turn_id, tool_call_id, tool, scope, summary, status, created_at) VALUES (?, ?, 't', ?, 'exec_command', 'sudo', ?, ?, ?)",
    ).run(approvalId, session, record, cmd, options.approval!, now);
  if (options.grant)
    db.query("INSERT INTO agent_grants (session_id, scope, approval_id, granted_at) VALUES (?, 'sudo', 'x', ?)").run(session, now);
  return { recordId: record, sessionId: session };
}

const start = (
  words: string[],
  kind: "command" | "escalation" | "terminal",
  extra: Partial<Extract<MonitorRequest, { op: "start" }>> = {},
) =>
  ({
    op: "start",
    sessionId: `p${nextId++}`,
    kind,
    words,
    env: { PATH: "/usr/bin:/bin" },
    tty: openTerminal(),
    ...extra,
  }) as MonitorRequest;

async function ended(pid: number): Promise<void> {
  await waitFor("the command to end", async () => ((await value<{ status?: unknown }>({ op: "reap", pid })).status ? true : undefined), {
    timeoutMs: 10_000,
    intervalMs: 20,
  });
}

beforeAll(() => {
  if (process.getuid?.() !== 0) throw new Error("The monitor test needs root, as agentd's monitor does (.ci/run runs as root)");
  dir = makeTempDir("agentd-monitor-");
  chmodSync(dir, 0o755);
  db = openStore({ path: join(dir, "agentd.db"), migrations: allMigrations });
  writeFileSync(join(dir, "agentd.jsonc"), "{}", { mode: 0o600 });
  monitor = new CommandMonitor({
    identity: NOBODY,
    workerUid: 0,
    pty: ptyConfigSchema().parse({}),
    approvals: approvalsConfigSchema().parse({}),
    db,
    configPath: join(dir, "agentd.jsonc"),
    token: TOKEN,
    ownPaths: () => [join(dir, "agentd.db"), join(dir, "agentd.jsonc")],
    reload: () => reloads++,
    gateProblems: () => [],
    log: createLogger("monitor-test"),
  });
});

afterAll(async () => {
  await monitor.workerGone();
  await monitor.close();
  for (const fd of terminals) libc().close(fd);
  db.close();
  removeTempDirs();
});

describe("agentd's monitor", () => {
  test("starts a command as the command user, with no_new_privs, and reaps it", async () => {
    const out = join(dir, "who");
    writeFileSync(out, "");
    chmodSync(out, 0o666);
    const { pid } = await value<{ pid: number }>(
      start(["/bin/sh", "-c", `{ id -u; grep NoNewPrivs /proc/self/status; } > ${out}`], "command"),
    );
    await ended(pid);
    expect(readFileSync(out, "utf8")).toMatch(/^65534\nNoNewPrivs:\s+1\n$/);
  });

  test("runs an escalation a person approved, as root, once", async () => {
    const marker = join(dir, "approved");
    const call = recordCall(`sudo touch ${marker}`, { approval: "allow_once" });
    const asked = start(["sudo", "touch", marker], "escalation", { call });
    const { pid } = await value<{ pid: number }>(asked);
    await ended(pid);
    expect(statSync(marker).uid).toBe(0);
    // The same approval does not run twice.
    const again = await refusal({ ...(asked as object), sessionId: `p${nextId++}` } as MonitorRequest);
    expect(again).toMatchObject({ code: "escalation_not_approved" });
    expect(again.message).toContain("has run already");
  });

  test("refuses an escalation no person approved, or other words than the recorded call's", async () => {
    const marker = join(dir, "unapproved");
    const cases: Array<[ReturnType<typeof recordCall> | undefined, string[], string]> = [
      [undefined, ["sudo", "touch", marker], "names no tool call"],
      [recordCall(`sudo touch ${marker}`, { approval: "pending" }), ["sudo", "touch", marker], "pending, not allowed"],
      [recordCall(`sudo touch ${marker}`, { approval: "deny" }), ["sudo", "touch", marker], "deny, not allowed"],
      [recordCall(`sudo touch ${marker}`), ["sudo", "touch", marker], "no person approved"],
      [
        recordCall(`sudo touch ${marker}`, { approval: "allow_once" }),
        ["sudo", "touch", "/etc/agentd-pwned"],
        "are not the recorded call's",
      ],
      [
        recordCall(`sudo touch ${marker}`, { approval: "allow_once", status: "finished" }),
        ["sudo", "touch", marker],
        "finished, not running",
      ],
      [recordCall(`touch ${marker}`, { approval: "allow_once" }), ["touch", marker], "are not the recorded call's"],
    ];
    for (const [call, words, why] of cases) {
      const refused = await refusal(start(words, "escalation", call ? { call } : {}));
      expect(refused.code).toBe("escalation_not_approved");
      expect(refused.message).toContain(why);
    }
    // Another session's approval does not cover this one.
    const other = recordCall(`sudo touch ${marker}`, { approval: "allow_once" });
    const stolen = await refusal(
      start(["sudo", "touch", marker], "escalation", { call: { ...other, sessionId: recordCall("true").sessionId } }),
    );
    expect(stolen.message).toContain("another session");
    expect(existsSync(marker)).toBe(false);
    expect(existsSync("/etc/agentd-pwned")).toBe(false);
  });

  test("follows a sudo grant and the session's policy, but never a deny", async () => {
    const granted = join(dir, "granted");
    const { pid } = await value<{ pid: number }>(
      start(["sudo", "touch", granted], "escalation", { call: recordCall(`sudo touch ${granted}`, { grant: true }) }),
    );
    await ended(pid);
    expect(statSync(granted).uid).toBe(0);
    const denied = join(dir, "denied");
    const refused = await refusal(
      start(["sudo", "touch", denied], "escalation", {
        call: recordCall(`sudo touch ${denied}`, { grant: true, policy: { sudo: "deny" } }),
      }),
    );
    expect(refused.message).toContain("sudo policy deny");
  });

  test("opens a root terminal only for a request that carried the token", async () => {
    expect((await refusal(start(["/bin/sh", "-c", "true"], "terminal"))).code).toBe("terminal_needs_token");
    expect((await refusal(start(["/bin/sh", "-c", "true"], "terminal", { credential: "wrong" }))).code).toBe("terminal_needs_token");
    const { pid } = await value<{ pid: number }>(start(["/bin/sh", "-c", "true"], "terminal", { credential: TOKEN }));
    await ended(pid);
  });

  test("attaches commands only to the worker's own terminals", async () => {
    expect((await refusal(start(["/bin/true"], "command", { tty: "/dev/tty" }))).message).toContain("not a /dev/pts terminal");
    expect((await refusal(start(["/bin/true"], "command", { tty: "/dev/pts/../tty" }))).message).toContain("not a /dev/pts terminal");
    const someoneElses = openTerminal();
    chownSync(someoneElses, 1234, 5);
    expect((await refusal(start(["/bin/true"], "command", { tty: someoneElses }))).message).toContain("not the worker's terminal");
  });

  test("signals and reaps only the processes it started", async () => {
    for (const request of [
      { op: "signal", pid: 1, signal: 9 },
      { op: "signal", pid: process.pid, signal: 0 },
      { op: "reap", pid: 1 },
    ] as MonitorRequest[])
      expect((await refusal(request)).code).toBe("monitor_refused");
  });

  test("keeps agentd's files out of the file tools' reach, and reads as the command user", async () => {
    expect((await refusal({ op: "file_read", args: { path: join(dir, "agentd.db") } })).code).toBe("path_protected");
    const secret = join(dir, "root-only");
    writeFileSync(secret, "x", { mode: 0o600 });
    expect((await refusal({ op: "file_read", args: { path: secret } })).code).toBe("file_permission_denied");
    expect((await refusal({ op: "file_read", args: { nope: 1 } })).code).toBe("invalid_request");
  });

  test("answers a malformed request with an error, never throws", async () => {
    expect(await monitor.handle("nonsense")).toBeUndefined();
    const reply = await monitor.handle({ id: 7, request: { op: "start", kind: "command" } });
    expect(reply).toMatchObject({ id: 7, ok: false, error: { code: "monitor_bad_request" } });
    expect(await monitor.handle({ id: 8, request: { op: "exec_as_root", argv: ["sh"] } })).toMatchObject({ ok: false });
  });

  test("gives the pinned config's text, and passes a reload request on", async () => {
    expect(await value<{ text: string }>({ op: "config" })).toMatchObject({ text: "{}" });
    await value({ op: "reload" });
    expect(reloads).toBe(1);
  });

  test("ends everything it started for a worker that is gone", async () => {
    const { pid } = await value<{ pid: number }>(start(["/bin/sh", "-c", "sleep 30 & sleep 30"], "command"));
    await monitor.workerGone();
    await waitFor("the session's group to end", () => {
      try {
        process.kill(-pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
  });
});
