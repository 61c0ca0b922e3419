import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// `agentd doctor` as the README runs it, with every default, from a fresh directory: it passes (so
// CI can gate on it), changes nothing on disk, and fails only on what is wrong, naming it.

afterAll(removeTempDirs);

const lines = (stdout: string) => stdout.trimEnd().split("\n");

describe("agentd doctor", () => {
  test("passes on the default setup, one honest line per check, and creates nothing", async () => {
    const dir = makeTempDir("agentd-doctor-");
    const result = await runAgentd(["doctor", "--timeout", "2s"], { cwd: dir, env: { HOME: dir } });
    expect(result.stderr).toBe("");
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 0, stdout: expect.stringMatching(/0 failed/) });
    const report = lines(result.stdout);
    const byName = new Map(report.slice(0, -1).map((line) => [line.slice(6).split(/\s{2,}/)[0]!, line]));
    expect([...byName.keys()]).toEqual(["pty", "privilege gate", "cgroups", "data dir", "sqlite", "providers", "ssh keys"]);
    for (const line of report.slice(0, -1)) expect(line).toMatch(/^(pass|skip) {2}/);
    // The default data dir does not exist yet: said so, and not made by doctor (serve makes it with its own modes).
    expect(byName.get("data dir")).toContain(`${join(dir, ".agentd")} does not exist yet; agentd serve can create it in ${dir}`);
    expect(byName.get("sqlite")).toContain(`a new store beside ${join(dir, ".agentd")} opens and takes a write`);
    expect(byName.get("providers")).toStartWith("skip");
    expect(byName.get("ssh keys")).toStartWith("skip");
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  test("an existing data dir is checked in place, its store opened, and nothing added to it", async () => {
    const dir = makeTempDir("agentd-doctor-");
    const dataDir = join(dir, "data");
    const first = await runAgentd(["doctor", "--data-dir", dataDir, "--timeout", "2s"], { cwd: dir, env: { HOME: dir } });
    expect(first.code).toBe(0);
    expect(existsSync(dataDir)).toBe(false);
    const { mkdirSync } = await import("node:fs");
    mkdirSync(dataDir, { mode: 0o700 });
    const second = await runAgentd(["doctor", "--data-dir", dataDir, "--timeout", "2s"], { cwd: dir, env: { HOME: dir } });
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`pass  data dir        ${dataDir} is writable`);
    expect(readdirSync(dataDir)).toEqual([]);
  }, 60_000);

  test("fails (exit 1) on what is wrong only, and names it: a data dir nobody can create, a provider that does not answer", async () => {
    const dir = makeTempDir("agentd-doctor-");
    const { writeFileSync } = await import("node:fs");
    // Mode 0600: a config the command user could read would fail the privilege gate, rightly.
    writeFileSync(
      join(dir, "agentd.jsonc"),
      JSON.stringify({ providers: [{ name: "gone", base_url: "http://127.0.0.1:9/v1", api_key: "k" }] }),
      {
        mode: 0o600,
      },
    );
    const result = await runAgentd(["doctor", "--data-dir", "/proc/agentd-nowhere/data", "--timeout", "2s"], {
      cwd: dir,
      env: { HOME: dir },
    });
    expect(result.code).toBe(1);
    const failed = lines(result.stdout).filter((line) => line.startsWith("fail"));
    expect(failed.map((line) => line.slice(6).split(/\s{2,}/)[0])).toEqual(["data dir", "sqlite", "provider gone"]);
    expect(result.stdout).toContain("cannot write in /proc");
    expect(result.stdout).toContain("GET http://127.0.0.1:9/v1/models failed");
    expect(
      lines(result.stdout)
        .filter((line) => line.startsWith("pass"))
        .map((line) => line.slice(6).split(/\s{2,}/)[0]),
    ).toEqual(["pty", "privilege gate", "cgroups"]);
  }, 60_000);
});
