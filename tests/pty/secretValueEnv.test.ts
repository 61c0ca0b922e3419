import { afterAll, expect, test } from "bun:test";
import { parseConfig } from "../../src/core/config/index.ts";
import { setLogSink, createLogger } from "../../src/core/log/index.ts";
import { openStore } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createWorkerServices } from "../../src/daemon/workerServices.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

setLogSink(() => {});
afterAll(() => removeTempDirs());

// Unique to this test: the values withheld stay so for the rest of the process.
const KEY = "sk-agentd-secret-value-test-5e2c91";

test("a command started through the PTY manager does not get SUDO_COMMAND carrying the configured key", async () => {
  const dataDir = makeTempDir("agentd-secret-value-");
  const db = openStore({ path: `${dataDir}/agentd.db`, migrations: allMigrations });
  const config = parseConfig(JSON.stringify({ providers: [{ name: "p", base_url: "http://127.0.0.1:9/v1", api_key: KEY }] }), {
    file: "agentd.jsonc",
    env: {},
  });
  // As `sudo -u agentd env OPENAI_API_KEY=sk-… agentd serve` leaves it; the name looks harmless.
  process.env.SUDO_COMMAND = `/usr/bin/env OPENAI_API_KEY=${KEY} agentd serve`;
  process.env.AGENTD_TEST_PLAIN = "still-here";
  const services = await createWorkerServices({
    config,
    db,
    dataDir,
    logger: createLogger("test.worker"),
    localFetch: () => new Response(null, { status: 404 }),
  });
  try {
    const pty = services.mounts.find((mount) => mount.path === "/api/pty")!.app;
    const response = await pty.request("/", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ cmd: 'echo "sudo_command=[$SUDO_COMMAND] plain=[$AGENTD_TEST_PLAIN]"; env' }),
    });
    expect(response.status).toBe(200);
    const { output, exit_code } = (await response.json()) as { output: string; exit_code: number };
    expect(exit_code).toBe(0);
    expect(output).toContain("sudo_command=[] plain=[still-here]");
    expect(output).not.toContain(KEY);
  } finally {
    delete process.env.SUDO_COMMAND;
    delete process.env.AGENTD_TEST_PLAIN;
    await services.pty.close();
    await services.close();
    db.close();
  }
});
