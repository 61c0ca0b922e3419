import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, runAgentd, spawnAgentd, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// `agentd exec` and `agentd reload` find the daemon from its data dir (run from an unrelated
// directory) and talk to it: exec streams the command's output and exits with its code; reload
// answers with the worker's outcome.

let daemon: DaemonProcess;
let elsewhere: string;
const provider = (name: string) => ({ name, base_url: "http://127.0.0.1:9/v1", api_key: "k" });

beforeAll(async () => {
  await ensureBinary();
  const dir = makeTempDir("agentd-exec-");
  elsewhere = join(dir, "elsewhere");
  mkdirSync(elsewhere);
  const dataDir = join(dir, "data");
  mkdirSync(dataDir);
  daemon = await startDaemon({ dataDir, config: { providers: [provider("first")] } });
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

// The data dir goes right after the command's name: after `--` it would be the command's own.
const cli = ([name, ...args]: string[]) => runAgentd([name!, "--data-dir", daemon.dataDir, ...args], { cwd: elsewhere });

describe("agentd exec", () => {
  test("local: prints the output and exits with the command's code", async () => {
    const result = await cli(["exec", "local", "--", "sh", "-c", "echo hi; exit 3"]);
    expect(result.stdout).toContain("hi");
    expect(result.code).toBe(3);
  });

  test("output that takes longer than one read is streamed whole", async () => {
    const result = await cli(["exec", "local", "--", "sh", "-c", "echo one; sleep 1.2; echo 'two words'"]);
    expect(result.stdout.replaceAll("\r", "")).toContain("one\ntwo words\n");
    expect(result.code).toBe(0);
  });

  test("Ctrl-C reaches the command as ^C in its terminal; exec exits with its code", async () => {
    const child = await spawnAgentd(["exec", "--data-dir", daemon.dataDir, "local", "--", "sh", "-c", "echo started; sleep 30"], {
      cwd: elsewhere,
    });
    try {
      const reader = child.stdout.getReader();
      let seen = "";
      while (!seen.includes("started")) {
        const { value, done } = await reader.read();
        if (done) break;
        seen += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      child.kill("SIGINT");
      // 130: the shell ended by SIGINT (128 + 2), as ^C in a terminal ends it.
      expect(await child.exited).toBe(130);
    } finally {
      await stopChild(child);
    }
  }, 30_000);

  test("an unknown hop is refused with its name, not run locally", async () => {
    const result = await cli(["exec", "nosuchhop", "--", "true"]);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("nosuchhop");
  });
});

describe("agentd reload", () => {
  test("a good file: exit 0 and the new provider is listed; a bad one: exit 1 with file:line:col", async () => {
    writeFileSync(daemon.configPath, JSON.stringify({ providers: [provider("first"), provider("second")] }));
    const good = await cli(["reload"]);
    expect(good.stderr).toBe("");
    expect(good.code).toBe(0);
    const status = await api<{ providers: { rows: Array<{ name: string }> } }>(daemon.url, "/status?format=json");
    expect(status.providers.rows.map((row) => row.name).sort()).toEqual(["first", "second"]);

    writeFileSync(daemon.configPath, '{\n  "providers": [\n    { "name": "third", "base_url": 5 }\n  ]\n}\n');
    const bad = await cli(["reload"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`config reload failed: ${daemon.configPath}:3:`);
    const health = await api<{ notes: string[] }>(daemon.url, "/health");
    expect(health.notes.some((note) => note.startsWith(`config reload failed: ${daemon.configPath}:3:`))).toBe(true);
  });
});
