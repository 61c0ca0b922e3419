import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { parseConfig } from "../../src/core/config/index.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createWorkerApp, type WorkerApp } from "../../src/daemon/workerApp.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

const SERVER_LIMIT = 2048;
const PROXY_LIMIT = 16 * 1024;
/** A uid other than this test's: the command user, as far as the guard knows. */
const NOT_US = process.getuid!() + 1;

let upstream: ScriptedUpstream;
let db: Database;
let worker: WorkerApp;
let server: Server<undefined>;
let url: string;

beforeAll(async () => {
  upstream = startScriptedUpstream();
  const dataDir = makeTempDir("agentd-worker-app-");
  const config = parseConfig(
    JSON.stringify({
      server: { body_limit_bytes: SERVER_LIMIT },
      proxy: { max_body_bytes: PROXY_LIMIT },
      providers: [{ name: "up", base_url: upstream.url, api_key: "k" }],
    }),
    { file: "agentd.jsonc", env: {} },
  );
  db = openStore({ path: `${dataDir}/agentd.db`, migrations: allMigrations });
  worker = await createWorkerApp({
    config,
    notes: [],
    db,
    dataDir,
    logger: createLogger("test.worker"),
    startedAt: Date.now(),
    supervisorPid: null,
    restarts: 0,
    // This test process serves the app and posts to it: as a person (root, or not the command user).
    commandUid: NOT_US,
  });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: worker.app.fetch, idleTimeout: 0 });
  url = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.stop(true);
  await worker?.services.close();
  db?.close();
  await upstream?.close();
  removeTempDirs();
});

const chat = (bytes: number) =>
  fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-test", messages: [{ role: "user", content: "x".repeat(bytes) }] }),
  });

describe("body limits of the worker's app", () => {
  test("/v1 takes a body over server.body_limit_bytes but under proxy.max_body_bytes", async () => {
    const response = await chat(SERVER_LIMIT * 3);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("ok");
    expect(upstream.completionRequests()).toHaveLength(1);
  });

  test("/v1 refuses a body over proxy.max_body_bytes with 413 JSON", async () => {
    const response = await chat(PROXY_LIMIT + 1);
    expect(response.status).toBe(413);
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("body_too_large");
    expect(upstream.completionRequests()).toHaveLength(1);
  });

  test("the API keeps the server's limit", async () => {
    const response = await fetch(`${url}/api/sessions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "x".repeat(SERVER_LIMIT * 3) }),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: "body_too_large" } });
  });
});
