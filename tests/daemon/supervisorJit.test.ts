import { afterAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { execWithoutOptimizingJit, OPTIMIZING_JIT_ENV, SUPERVISOR_JIT_ENV, type Execve } from "../../src/daemon/supervisorJit.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

const SOURCE = join(import.meta.dir, "../../src/daemon/supervisorJit.ts");

function recordingExecve(): { execve: Execve; calls: Array<[string, string[], Record<string, string | undefined>]> } {
  const calls: Array<[string, string[], Record<string, string | undefined>]> = [];
  return { execve: (file, args, env) => void calls.push([file, args, env]), calls };
}

describe("the supervisor's exec without the optimizing JIT", () => {
  test("execs the same command once, with the option and the mark set", () => {
    const { execve, calls } = recordingExecve();
    const env = { PATH: "/usr/bin", HOME: "/root" };
    expect(execWithoutOptimizingJit(env, { file: "/opt/agentd", args: ["agentd", "serve", "--port", "0"] }, execve)).toBeUndefined();
    expect(calls).toEqual([
      [
        "/opt/agentd",
        ["agentd", "serve", "--port", "0"],
        { PATH: "/usr/bin", HOME: "/root", [OPTIMIZING_JIT_ENV]: "0", [SUPERVISOR_JIT_ENV]: "1" },
      ],
    ]);
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/root" });
  });

  test("once exec'd, removes both from its environment, so nothing it starts inherits them", () => {
    const { execve, calls } = recordingExecve();
    const env: Record<string, string | undefined> = { PATH: "/usr/bin", [OPTIMIZING_JIT_ENV]: "0", [SUPERVISOR_JIT_ENV]: "1" };
    expect(execWithoutOptimizingJit(env, { file: "/opt/agentd", args: ["/opt/agentd", "serve"] }, execve)).toBeUndefined();
    expect(calls).toEqual([]);
    expect(env).toEqual({ PATH: "/usr/bin" });
  });

  test("leaves an operator's own setting of the option alone, for both processes", () => {
    const { execve, calls } = recordingExecve();
    const env: Record<string, string | undefined> = { [OPTIMIZING_JIT_ENV]: "1" };
    expect(execWithoutOptimizingJit(env, { file: "/opt/agentd", args: ["/opt/agentd", "serve"] }, execve)).toBeUndefined();
    expect(calls).toEqual([]);
    expect(env).toEqual({ [OPTIMIZING_JIT_ENV]: "1" });
  });

  test("an exec that fails is a problem to log, and the process goes on as it is", () => {
    const failing: Execve = () => {
      throw new Error("ENOENT: no such file or directory, execve '/gone/agentd'");
    };
    expect(execWithoutOptimizingJit({}, { file: "/gone/agentd", args: ["/gone/agentd", "serve"] }, failing)).toBe(
      "Cannot exec /gone/agentd to run the supervisor without the optimizing JIT: ENOENT: no such file or directory, execve '/gone/agentd'",
    );
  });

  test("a real exec: same pid, the DFG compiler off in the exec'd process, and a child it starts has it back", async () => {
    const dir = makeTempDir("agentd-supervisor-jit-");
    const script = join(dir, "exec.ts");
    // A hot loop that JSC's DFG compiles within a few thousand calls when it is on. The child is
    // started with the environment as it is now, as agentd starts every child: Bun.spawn without
    // an env passes the one the process was started with.
    writeFileSync(
      script,
      `import { numberOfDFGCompiles } from "bun:jsc";
import { execWithoutOptimizingJit } from ${JSON.stringify(SOURCE)};
const pid = process.pid;
const problem = execWithoutOptimizingJit(process.env, { file: process.execPath, args: [process.execPath, ${JSON.stringify(script)}] });
function hot(n: number) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
for (let i = 0; i < 20000; i++) hot(100);
const child = Bun.spawnSync([process.execPath, "-e", "console.log(process.env.${OPTIMIZING_JIT_ENV} ?? 'unset')"], { env: { ...process.env } });
console.log(JSON.stringify({ pid, problem, dfg: numberOfDFGCompiles(hot), env: process.env.${OPTIMIZING_JIT_ENV} ?? "unset", child: child.stdout.toString().trim() }));
`,
    );
    const env = { ...process.env };
    delete env[OPTIMIZING_JIT_ENV];
    delete env[SUPERVISOR_JIT_ENV];
    const run = Bun.spawn([process.execPath, script], { env, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    expect(err).toBe("");
    expect(code).toBe(0);
    const lines = out.trim().split("\n");
    expect(lines).toHaveLength(1);
    // JSC answers 1000000 for a function when its DFG is off (so loops waiting for a compile end).
    expect(JSON.parse(lines[0]!)).toEqual({ pid: run.pid, dfg: 1_000_000, env: "unset", child: "unset" });

    // The same loop in a process with the JIT as it comes: what "dfg: 1_000_000" above is measured against.
    const control = join(dir, "control.ts");
    writeFileSync(
      control,
      `import { numberOfDFGCompiles } from "bun:jsc";
function hot(n: number) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * 7) % 1000003; return s; }
for (let i = 0; i < 20000; i++) hot(100);
console.log(numberOfDFGCompiles(hot));
`,
    );
    const compiled = Bun.spawnSync([process.execPath, control], { env });
    const compiles = Number(compiled.stdout.toString());
    expect(compiles).toBeGreaterThan(0);
    expect(compiles).toBeLessThan(1_000_000);
  });
});
