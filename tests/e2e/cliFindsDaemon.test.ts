import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// A broken ./agentd.jsonc beside a running daemon (data dir ./.agentd): the compiled CLI still
// reaches it through ./.agentd/ready.json, through --data-dir and AGENTD_DATA_DIR; `reload`
// reaches it and reports the daemon's own broken config by file, line and column.

const BROKEN = '{\n  "server": { "port": 7070,\n  oops\n}\n';
let daemon: DaemonProcess;
let home: string;

beforeAll(async () => {
  await ensureBinary();
  home = makeTempDir("agentd-cli-finds-");
  mkdirSync(join(home, ".agentd"), { mode: 0o700 });
  daemon = await startDaemon({ dataDir: join(home, ".agentd"), config: { watchdog: { tick_ms: 100 } } });
  writeFileSync(join(home, "agentd.jsonc"), BROKEN);
}, 120_000);

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

const inHome = (...args: string[]) => runAgentd(args, { cwd: home, env: { HOME: home } });

describe("the CLI finds its daemon past a broken ./agentd.jsonc", () => {
  test("status, health and incidents through ./.agentd/ready.json", async () => {
    const status = await inHome("status");
    expect(status.stderr).toBe("");
    expect([0, 1]).toContain(status.code);
    expect(status.stdout).toMatch(/^agentd \S+ {2}status (PASS|WARN|FAIL) /);
    const health = await inHome("health");
    expect(health.code).toBe(0);
    expect(health.stdout).toStartWith("agentd ");
    const incidents = await inHome("incidents", "list");
    expect(incidents.code).toBe(0);
    expect(incidents.stdout).toBe("No incidents.\n");
  }, 60_000);

  test("through AGENTD_DATA_DIR and --data-dir from another directory with a broken config", async () => {
    const elsewhere = makeTempDir("agentd-cli-elsewhere-");
    writeFileSync(join(elsewhere, "agentd.jsonc"), BROKEN);
    const viaEnv = await runAgentd(["health"], { cwd: elsewhere, env: { HOME: elsewhere, AGENTD_DATA_DIR: daemon.dataDir } });
    expect(viaEnv.stderr).toBe("");
    expect(viaEnv.code).toBe(0);
    const viaFlag = await runAgentd(["status", "--data-dir", daemon.dataDir], { cwd: elsewhere, env: { HOME: elsewhere } });
    expect(viaFlag.stderr).toBe("");
    expect(viaFlag.stdout).toContain(" status ");
  }, 60_000);

  test("reload reaches the daemon and reports its own broken config by file, line and column", async () => {
    writeFileSync(daemon.configPath, BROKEN);
    const reload = await inHome("reload");
    expect(reload.code).toBe(1);
    expect(reload.stderr).toContain(`${daemon.configPath}:3:3`);
    expect(reload.stderr).toContain("invalid JSONC");
  }, 60_000);
});
