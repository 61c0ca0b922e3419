import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLogLine, readLines, type LogRecord } from "../../src/core/log/index.ts";
import { binaryForAnyUser, cleanEnv, stopChild } from "../support/binary.ts";
import { processesOf } from "../support/userProcesses.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { canRunGateTest, createGateUser, type GateUser } from "./support/gateUser.ts";

// Started as a user, agentd cannot give its commands another uid: it runs them in mount and PID
// namespaces of their own, with its data dir and config hidden and its binary read-only, and asks
// for the token on everything a command could misuse. A hostile command tries the quick start's
// known attacks from inside.

let user: GateUser;
let proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
let binary = "";
let home = "";
let dataDir = "";
let configPath = "";
let url = "";
let token = "";
const lines: LogRecord[] = [];

const CONFIG = '{ "log": { "level": "info" } }\n';
const asUser = (argv: string[]) => ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", ...argv];

beforeAll(async () => {
  if (!canRunGateTest()) throw new Error("This test needs root (to make a user) and /usr/bin/setpriv: .ci/run runs as root");
  home = makeTempDir("agentd-userstart-home-");
  user = createGateUser(home);
  // The quick start: the binary and the config in the user's own directory.
  const source = await binaryForAnyUser();
  binary = join(home, "agentd");
  writeFileSync(binary, readFileSync(source), { mode: 0o755 });
  user.own(binary, 0o755);
  configPath = join(home, "agentd.jsonc");
  writeFileSync(configPath, CONFIG);
  user.own(configPath, 0o600);
  dataDir = join(home, "data");
  mkdirSync(dataDir);
  user.own(dataDir, 0o700);
  proc = Bun.spawn(asUser([binary, "serve", "--port", "0", "--data-dir", dataDir, "--config", configPath]), {
    cwd: home,
    env: cleanEnv({ HOME: home, USER: user.name }),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  void readLines(proc.stdout, (line) => {
    const record = parseLogLine(line);
    if (record) lines.push(record);
  });
  const listening = await waitFor("the worker to listen", () => lines.find((r) => r.event === "http.listening"), { timeoutMs: 60_000 });
  url = String(listening.url);
  token = readFileSync(join(dataDir, "token"), "utf8").trim();
}, 120_000);

afterAll(async () => {
  if (proc) await stopChild(proc, 20_000);
  await user?.remove();
  removeTempDirs();
});

async function run(cmd: string): Promise<{ output: string; exit_code: number | null }> {
  const response = await fetch(`${url}/api/pty`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ cmd, yield_time_ms: 10_000 }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { output: string; exit_code: number | null };
}

test("the log, /health, /status and doctor say which gate holds and what it does not cover", async () => {
  expect(lines.find((r) => r.event === "security.gate_holds")).toMatchObject({ mode: "namespaces" });
  const status = (await (await fetch(`${url}/status`, { headers: { accept: "application/json" } })).json()) as {
    worker: { privilege_gate: { mode: string; limits?: string } };
  };
  expect(status.worker.privilege_gate.mode).toBe("namespaces");
  expect(status.worker.privilege_gate.limits).toContain("dotfiles");
  const health = await (await fetch(`${url}/health`)).text();
  expect(health).toContain("security:privilege_gate");
  const doctor = Bun.spawn(asUser([binary, "doctor", "--data-dir", dataDir, "--config", configPath, "--timeout", "1s"]), {
    cwd: home,
    env: cleanEnv({ HOME: home, USER: user.name }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = await new Response(doctor.stdout).text();
  await doctor.exited;
  expect(out).toMatch(/^pass\s+privilege gate\s+namespaces/m);
}, 60_000);

test("a command cannot read the token or the config, replace the binary, see or kill agentd, or call the API as a person", async () => {
  const supervisor = proc!.pid;
  const result = await run(
    [
      `cat ${dataDir}/token; echo "token=$?"`,
      `cat ${configPath}; echo "config=$?"`,
      `echo '{"approvals":{"policy":{"sudo":"allow"}}}' > ${configPath}; echo "config-write=$?"`,
      `echo x >> ${binary}; echo "binary-write=$?"`,
      `mv ${binary} ${binary}.old; echo "binary-move=$?"`,
      `kill -9 ${supervisor}; echo "kill=$?"`,
      `ls /proc | grep -c '^[0-9]'`,
      `curl -s -o /dev/null -w 'pty=%{http_code}\\n' -X POST -H 'content-type: application/json' -d '{"cmd":"id"}' ${url}/api/pty`,
      `curl -s -o /dev/null -w 'decide=%{http_code}\\n' -X POST -H 'content-type: application/json' -d '{"decision":"allow_once"}' ${url}/api/approvals/x`,
    ].join("; "),
  );
  const out = result.output;
  expect(out).not.toContain(token);
  for (const step of ["token", "binary-write", "binary-move", "kill"]) expect(out).toMatch(new RegExp(`${step}=[1-9]`));
  // The config is /dev/null to the command: it reads nothing, and what it writes goes nowhere.
  expect(out).not.toContain('"level"');
  expect(out).toContain("pty=401");
  expect(out).toContain("decide=401");
  expect(readFileSync(configPath, "utf8")).toBe(CONFIG);
  expect(existsSync(`${binary}.old`)).toBe(false);
  expect(proc!.exitCode).toBeNull();
}, 60_000);

test("a fork bomb: /health answers within 1 s throughout, agentd lives, and the bomb ends with its session", async () => {
  const before = processesOf(user.uid).length;
  const response = await fetch(`${url}/api/pty`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
    body: JSON.stringify({ cmd: "bomb() { bomb | bomb & }; bomb; exec sleep 30", yield_time_ms: 1000 }),
  });
  const opened = (await response.json()) as { session_id: string | null };
  expect(opened.session_id).toBeString();
  let slowest = 0;
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    const started = performance.now();
    await (await fetch(`${url}/health`, { signal: AbortSignal.timeout(1000) })).text();
    slowest = Math.max(slowest, performance.now() - started);
    await Bun.sleep(100);
  }
  expect(slowest).toBeLessThan(1000);
  expect(processesOf(user.uid).length).toBeGreaterThan(before + 10);
  const closed = await fetch(`${url}/api/pty/${opened.session_id}`, { method: "DELETE", headers: { authorization: `Bearer ${token}` } });
  expect(closed.status).toBe(200);
  // Its pid 1 gone, the kernel ends everything else in the namespace.
  await waitFor("the bomb to end", () => (processesOf(user.uid).length <= before ? true : undefined), { timeoutMs: 15_000 });
  expect(proc!.exitCode).toBeNull();
}, 60_000);
