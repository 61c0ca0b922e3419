import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { chmodSync, existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, spawnAgentd, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { GiveUp, isProcessAlive, waitFor } from "../support/waitFor.ts";

/** Reads a pipe continuously, so a chatty child never blocks on a full pipe. */
function collect(stream: ReadableStream<Uint8Array>): { text: () => string; done: Promise<void> } {
  let text = "";
  const done = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text += decoder.decode(chunk, { stream: true });
  })();
  return { text: () => text, done };
}

// How a hop starts the remote agentd: loopback, yet every route but /livez needs the token.
describe("agentd serve --require-token on loopback", () => {
  let child: Subprocess<"ignore", "pipe", "pipe">;
  let dataDir: string;
  let url: string;
  let token: string;
  let stdout: ReturnType<typeof collect>;
  let stderr: ReturnType<typeof collect>;
  let workerPid: number | undefined;

  beforeAll(async () => {
    await ensureBinary();
    dataDir = makeTempDir("agentd-require-token-");
    child = await spawnAgentd(["serve", "--bind", "127.0.0.1", "--port", "0", "--require-token", "--data-dir", dataDir], {
      cwd: dataDir,
      env: { HOME: dataDir },
    });
    stdout = collect(child.stdout);
    stderr = collect(child.stderr);
    const ready = await waitFor(
      "ready.json",
      () => {
        if (child.exitCode !== null) throw new GiveUp(`agentd serve exited with ${child.exitCode}: ${stderr.text()}`);
        const path = join(dataDir, "ready.json");
        return existsSync(path) ? (JSON.parse(readFileSync(path, "utf8")) as { url: string; pid: number }) : undefined;
      },
      { timeoutMs: 60_000 },
    );
    url = ready.url;
    workerPid = ready.pid;
    token = readFileSync(join(dataDir, "token"), "utf8").trim();
  }, 120_000);

  afterAll(async () => {
    if (child) await stopChild(child);
    if (workerPid && isProcessAlive(workerPid)) process.kill(workerPid, "SIGKILL");
    removeTempDirs();
  }, 60_000);

  test("the token file is created 0600; /livez needs no token", async () => {
    expect(statSync(join(dataDir, "token")).mode & 0o777).toBe(0o600);
    expect(token.length).toBeGreaterThanOrEqual(16);
    expect((await fetch(`${url}/livez`)).status).toBe(200);
  });

  test("/api/pty refuses a request without the token or with a wrong one, and runs one with it", async () => {
    // Not in the data dir: the command runs as the command user, who cannot write there.
    const shared = makeTempDir("agentd-require-token-work-");
    chmodSync(shared, 0o777);
    const marker = join(shared, "ran");
    const run = (headers: Record<string, string>) =>
      fetch(`${url}/api/pty`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify({ cmd: `touch ${marker}; echo token-ok`, yield_time_ms: 5000 }),
      });
    const refused = await run({});
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
    expect((await run({ authorization: "Bearer wrong-token-wrong-token" })).status).toBe(401);
    expect(existsSync(marker)).toBe(false);
    const accepted = await run({ authorization: `Bearer ${token}` });
    expect(accepted.status).toBe(200);
    expect(((await accepted.json()) as { output: string }).output).toContain("token-ok");
    expect(existsSync(marker)).toBe(true);
  }, 60_000);

  test("the token is never printed: not on stderr, stdout or in the log file", async () => {
    await waitFor("the auth.token log line", () => stdout.text().includes('"auth.token"'), { timeoutMs: 30_000 });
    expect(stderr.text()).not.toContain(token);
    expect(stdout.text()).not.toContain(token);
    expect(readFileSync(join(dataDir, "logs", "agentd.log"), "utf8")).not.toContain(token);
  });
});
