import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

let daemon: DaemonProcess;
let home: string;

beforeAll(async () => {
  await ensureBinary();
  home = makeTempDir("agentd-hops-");
  const dataDir = join(home, "data");
  mkdirSync(dataDir);
  daemon = await startDaemon({ dataDir, config: {} });
}, 300_000);

afterAll(async () => {
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

/** Runs ./agentd with the home and working directory in the test's temp dir, so no developer config is read. */
const agentd = (...args: string[]) => runAgentd(args, { cwd: home, env: { HOME: home } });

describe("agentd hops against a daemon with no hops", () => {
  test("the table says there are none", async () => {
    const result = await agentd("hops", "--url", daemon.url);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("no hops; open one with: agentd hop user@host\n");
  }, 60_000);

  test("--json prints an empty list", async () => {
    const result = await agentd("hops", "--url", daemon.url, "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
  }, 60_000);

  test("without --url it finds the daemon through the data dir's ready file", async () => {
    const result = await agentd("hops", "--data-dir", daemon.dataDir, "--json");
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual([]);
  }, 60_000);

  test("nothing listening: exit 5 and one clear line", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = server.port!;
    server.stop(true);
    const result = await agentd("hops", "--url", `http://127.0.0.1:${port}`);
    expect(result.code).toBe(5);
    expect(result.stdout).toBe("");
    expect(result.stderr).toStartWith(`Cannot reach agentd at http://127.0.0.1:${port}: `);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  }, 60_000);

  test("a stray argument is a usage error", async () => {
    const result = await agentd("hops", "prod", "--url", daemon.url);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toStartWith("agentd hops: unexpected argument 'prod'");
    expect(result.stderr).toEndWith("\nRun 'agentd hops --help' for usage.\n");
  }, 60_000);
});

describe("agentd hop --close", () => {
  test("an unknown hop: exit 1 and the daemon's clear message", async () => {
    const result = await agentd("hop", "--close", "NOPE", "--url", daemon.url);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("agentd hop: No hop named NOPE; agentd hops lists them\n");
    // The daemon is unharmed and still lists no hops.
    expect(JSON.parse((await agentd("hops", "--url", daemon.url, "--json")).stdout)).toEqual([]);
  }, 60_000);

  test("--close with a destination too is a usage error", async () => {
    const result = await agentd("hop", "--close", "NOPE", "user@host", "--url", daemon.url);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("agentd hop: --close takes only the hop's name\nRun 'agentd hop --help' for usage.\n");
  }, 60_000);

  test("no destination is a usage error", async () => {
    const result = await agentd("hop", "--url", daemon.url);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("agentd hop: expected one destination, user@host[:port]\nRun 'agentd hop --help' for usage.\n");
  }, 60_000);
});
