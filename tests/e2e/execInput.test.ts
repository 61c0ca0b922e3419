import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cleanEnv, ensureBinary } from "../support/binary.ts";
import { tokenEnvFor } from "../support/daemonTokens.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { TmuxTerminal } from "./support/tmuxTerminal.ts";

// `agentd exec -i` through the compiled binary: piped stdin reaches the command byte for byte
// (control characters, a line longer than a terminal's line buffer, no final newline) and its
// end is the command's end of input, as with `kubectl exec -i`; on a terminal nothing is echoed twice.

let binary: string;
let daemon: DaemonProcess;
let elsewhere: string;
let term: TmuxTerminal;

beforeAll(async () => {
  binary = await ensureBinary();
  const dir = makeTempDir("agentd-exec-input-");
  elsewhere = join(dir, "elsewhere");
  mkdirSync(elsewhere);
  const dataDir = join(dir, "data");
  mkdirSync(dataDir);
  daemon = await startDaemon({ dataDir, config: {} });
  term = new TmuxTerminal();
}, 120_000);

afterAll(async () => {
  term?.kill();
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

/** `agentd exec --data-dir D ARGS` with `input` on its stdin, closed after it. */
async function execWithInput(args: string[], input: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const argv = ["exec", "--data-dir", daemon.dataDir, ...args];
  const child = Bun.spawn([binary, ...argv], {
    cwd: elsewhere,
    env: cleanEnv(tokenEnvFor(argv, {})),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  try {
    child.stdin.write(input);
    await child.stdin.end();
    const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

describe("agentd exec -i", () => {
  test("echo hi | agentd exec -i local -- cat prints hi once and ends at the end of input", async () => {
    const result = await execWithInput(["-i", "local", "--", "cat"], "hi\n");
    expect(result).toEqual({ code: 0, stdout: "hi\n", stderr: "" });
  }, 60_000);

  test("hostile input arrives byte for byte: control characters, a 10000-byte line, no final newline", async () => {
    const input = `one\ntwo\x03three\x04four\x15five\x1a\x1c\x7f\x13\x11\r\x16six\té漢😀\n${"x".repeat(10_000)}\nlast-without-newline`;
    const result = await execWithInput(["-i", "local", "--", "cat"], input);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout.length).toBe(input.length);
    expect(result.stdout).toBe(input);
  }, 60_000);

  test("without -i piped input is not sent, and exec says so instead of leaving the person guessing", async () => {
    const result = await execWithInput(["local", "--", "echo", "ran"], "ignored\n");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("ran");
    expect(result.stdout).not.toContain("ignored");
    expect(result.stderr).toBe("agentd exec: stdin is not sent to the command without -i (agentd exec -i …)\n");
  }, 60_000);

  test("the command's exit code is exec's, after it read what it wanted; empty input is an immediate end", async () => {
    const partial = await execWithInput(["-i", "local", "--", "sh", "-c", 'read line; echo "got $line"; exit 7'], "first\nsecond\n");
    expect(partial).toEqual({ code: 7, stdout: "got first\n", stderr: "" });
    const empty = await execWithInput(["-i", "local", "--", "wc", "-c"], "");
    expect(empty.code).toBe(0);
    expect(empty.stdout.trim()).toBe("0");
  }, 60_000);

  test("on a terminal: typed lines reach the command, the remote side echoes nothing, Ctrl-D ends it", async () => {
    const w = term.start(`cd ${elsewhere} && ${binary} exec --data-dir ${daemon.dataDir} -i local -- sed -u s/^/got:/`);
    term.keys(w, "hello", "Enter");
    await term.waitFor(w, "the command's answer", (s) => s.includes("got:hello"));
    term.keys(w, "C-d");
    expect(await term.exitCode(w)).toBe(0);
    const lines = term
      .screen(w)
      .split("\n")
      .filter((line) => line.includes("hello"));
    // The local terminal's echo of the typed line, and the command's answer: no third copy.
    expect(lines.map((line) => line.trimEnd())).toEqual(["hello", "got:hello"]);
  }, 60_000);
});

describe("agentd exec detaches with Ctrl-], and agentd attach follows the terminal again", () => {
  test("the printed command re-attaches: the rest of the output and the command's exit code", async () => {
    // Where the command user (started as root, commands run as agentd-cmd) can see it appear.
    const flag = join(tmpdir(), `agentd-e2e-go-on-${process.pid}-${Date.now()}`);
    const script = `echo started; while [ ! -e ${flag} ]; do sleep 0.1; done; echo finished; exit 5`;
    const w = term.start(`cd ${elsewhere} && ${binary} exec --data-dir ${daemon.dataDir} local -- sh -c '${script}'`);
    await term.waitFor(w, "the command's first line", (s) => s.includes("started"));
    term.keys(w, "C-]");
    expect(await term.exitCode(w)).toBe(0);
    const line = /Detached: the command goes on in agentd \(terminal (\S+)\)\. Re-attach: (agentd attach .*)$/m.exec(term.screen(w));
    expect(line).not.toBeNull();
    const [, id, again] = line!;
    expect(again).toBe(`agentd attach ${id} --data-dir ${daemon.dataDir}`);
    expect(term.screen(w)).not.toContain("finished");

    const a = term.start(`cd ${elsewhere} && ${again!.replace(/^agentd/, binary)}`);
    writeFileSync(flag, "");
    await term.waitFor(a, "the rest of the output", (s) => s.includes("finished"), 20_000);
    expect(await term.exitCode(a)).toBe(5);
    expect(term.screen(a)).toContain("finished");
    rmSync(flag, { force: true });
  }, 60_000);

  test("attach to a terminal that does not exist exits 1 and names it", async () => {
    const argv = ["attach", "--data-dir", daemon.dataDir, "0badc0de"];
    const child = Bun.spawn([binary, ...argv], { cwd: elsewhere, env: cleanEnv(tokenEnvFor(argv, {})), stdout: "pipe", stderr: "pipe" });
    const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
    expect(code).toBe(1);
    expect(stderr).toContain("0badc0de");
  }, 60_000);
});
