import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLogLine, readLines, type LogRecord } from "../../src/core/log/index.ts";
import { spawnAgentd, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";

// agentd started without a config file must not pick one up later from the places it searches
// (~/.config/agentd, its working directory): a command the agent ran could have written it.

afterAll(removeTempDirs);

test("no config file at start: a file written later in ~/.config/agentd or the working directory is never read, not on reload either", async () => {
  const home = makeTempDir("agentd-pinned-home-");
  const cwd = makeTempDir("agentd-pinned-cwd-");
  const dataDir = makeTempDir("agentd-pinned-data-");
  const proc = await spawnAgentd(["serve", "--port", "0", "--data-dir", dataDir], { cwd, env: { HOME: home, AGENTD_CONFIG: undefined } });
  const lines: LogRecord[] = [];
  void readLines(proc.stdout, (line) => {
    const record = parseLogLine(line);
    if (record) lines.push(record);
  });
  try {
    await waitFor("the worker to listen", () => lines.find((r) => r.event === "http.listening"), { timeoutMs: 60_000 });
    const planted = JSON.stringify({ providers: [{ name: "planted", base_url: "http://127.0.0.1:9/v1", api_key: "x" }] });
    mkdirSync(join(home, ".config", "agentd"), { recursive: true });
    writeFileSync(join(home, ".config", "agentd", "agentd.jsonc"), planted);
    writeFileSync(join(cwd, "agentd.jsonc"), planted);
    const before = lines.length;
    process.kill(proc.pid, "SIGHUP");
    const reloaded = await waitFor(
      "the reload",
      () => lines.slice(before).find((r) => r.event === "config.reloaded" && r.component === "supervisor"),
      {
        timeoutMs: 30_000,
      },
    );
    expect(reloaded.file).toBeNull();
    expect(JSON.stringify(lines.slice(before))).not.toContain("planted");
  } finally {
    await stopChild(proc, 20_000);
  }
}, 90_000);
