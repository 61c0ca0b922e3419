import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLogLine, readLines, type LogRecord } from "../../src/core/log/index.ts";
import { binaryForAnyUser, cleanEnv, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { canRunGateTest, createGateUser, type GateUser } from "./support/gateUser.ts";

// Started as a user, agentd cannot give its commands another uid: it runs unguarded and says so,
// in the log, /health, /status, the page and `agentd doctor`, instead of claiming a gate.

let user: GateUser;
let proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
let binary = "";
let home = "";
let dataDir = "";
let url = "";
const lines: LogRecord[] = [];

beforeAll(async () => {
  if (!canRunGateTest()) throw new Error("This test needs root (to make a user) and /usr/bin/setpriv: .ci/run runs as root");
  binary = await binaryForAnyUser();
  home = makeTempDir("agentd-unguarded-home-");
  user = createGateUser(home);
  dataDir = join(home, "data");
  mkdirSync(dataDir);
  user.own(dataDir, 0o700);
  writeFileSync(join(home, "agentd.jsonc"), "{}\n");
  user.own(join(home, "agentd.jsonc"), 0o600);
  proc = Bun.spawn(
    ["setpriv", `--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", binary, "serve", "--port", "0", "--data-dir", dataDir],
    { cwd: home, env: cleanEnv({ HOME: home, USER: user.name }), stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  void readLines(proc.stdout, (line) => {
    const record = parseLogLine(line);
    if (record) lines.push(record);
  });
  const listening = await waitFor("the worker to listen", () => lines.find((r) => r.event === "http.listening"), { timeoutMs: 60_000 });
  url = String(listening.url);
}, 120_000);

afterAll(async () => {
  if (proc) await stopChild(proc, 20_000);
  await user?.remove();
  removeTempDirs();
});

test("the log, /health, /status and the page say the start is unguarded", async () => {
  expect(lines.find((r) => r.event === "security.gate_open")).toMatchObject({ mode: "unguarded" });
  const health = await (await fetch(`${url}/health`)).text();
  expect(health).toContain("security:privilege_gate");
  expect(health).toContain("unguarded");
  const status = (await (await fetch(`${url}/status`, { headers: { accept: "application/json" } })).json()) as {
    worker: { privilege_gate: { mode: string }; privilege_gate_problem?: string };
  };
  expect(status.worker.privilege_gate.mode).toBe("unguarded");
  expect(status.worker.privilege_gate_problem).toContain("not root");
  const page = await (await fetch(`${url}/status`, { headers: { accept: "text/html" } })).text();
  expect(page).toContain("Unguarded");
}, 30_000);

test("agentd doctor fails its privilege gate check when started as a user", async () => {
  const doctor = Bun.spawn(
    [
      "setpriv",
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      "--init-groups",
      "--",
      binary,
      "doctor",
      "--data-dir",
      dataDir,
      "--timeout",
      "1s",
    ],
    { cwd: home, env: cleanEnv({ HOME: home, USER: user.name }), stdout: "pipe", stderr: "pipe" },
  );
  const [code, out] = await Promise.all([doctor.exited, new Response(doctor.stdout).text()]);
  expect(code).not.toBe(0);
  expect(out).toMatch(/^fail\s+privilege gate\s+unguarded/m);
}, 60_000);
