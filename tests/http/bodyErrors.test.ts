import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Server } from "bun";
import { parseConfig } from "../../src/core/config/index.ts";
import { createLogger, setLogSink } from "../../src/core/log/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createWorkerApp, type WorkerApp } from "../../src/daemon/workerApp.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

/** A uid other than this test's: the command user, as far as the guard knows. */
const NOT_US = process.getuid!() + 1;

/** Every capability's body-reading route, in the app the worker builds, each with a field of the wrong type. */
const ROUTES: Array<{ path: string; wrongField: Record<string, unknown>; param: string }> = [
  { path: "/v1/chat/completions", wrongField: { model: "m", messages: "hi" }, param: "messages" },
  { path: "/v1/responses", wrongField: { model: "m", input: 5 }, param: "input" },
  { path: "/api/admin/proxy/providers/primary/breaker/open", wrongField: { cooldown_ms: "soon" }, param: "cooldown_ms" },
  { path: "/api/pty", wrongField: { cmd: 5 }, param: "cmd" },
  { path: "/api/files/read", wrongField: { path: 5 }, param: "path" },
  { path: "/api/hops", wrongField: { destination: 5 }, param: "destination" },
  { path: "/api/sessions", wrongField: { model: 5 }, param: "model" },
  { path: "/api/incidents/silences", wrongField: { target: 5 }, param: "target" },
  { path: "/api/incidents/1/action", wrongField: { decision: "maybe" }, param: "decision" },
];

let db: Database;
let worker: WorkerApp;
let server: Server<undefined>;
let url: string;

beforeAll(async () => {
  setLogSink(() => {});
  const dataDir = makeTempDir("agentd-body-errors-");
  const config = parseConfig(JSON.stringify({ providers: [{ name: "primary", base_url: "http://127.0.0.1:9/v1", api_key: "k" }] }), {
    file: "agentd.jsonc",
    env: {},
  });
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
    // This test process posts decisions and direct calls as a person: its sockets are not the command user's.
    commandUid: NOT_US,
  });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: worker.app.fetch, idleTimeout: 0 });
  url = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.stop(true);
  await worker?.services.close();
  db?.close();
  removeTempDirs();
  setLogSink((line) => process.stdout.write(`${line}\n`));
});

async function post(path: string, body: string): Promise<{ status: number; body: { error: Record<string, unknown> } }> {
  const response = await fetch(url + path, { method: "POST", headers: { "content-type": "application/json" }, body });
  return { status: response.status, body: (await response.json()) as { error: Record<string, unknown> } };
}

describe("one code and one shape for a malformed body, on every route", () => {
  test("a body that is not JSON is 400 invalid_json with param null", async () => {
    for (const { path } of ROUTES) {
      const answer = await post(path, "{not json");
      expect({ path, status: answer.status, keys: Object.keys(answer.body.error) }).toEqual({
        path,
        status: 400,
        keys: ["message", "type", "param", "code"],
      });
      expect({ path, error: answer.body.error }).toMatchObject({
        path,
        error: { type: "invalid_request_error", param: null, code: "invalid_json" },
      });
    }
  });

  test("JSON that is not an object is invalid_json as well", async () => {
    for (const { path } of ROUTES) {
      const answer = await post(path, "[1, 2]");
      expect({ path, status: answer.status, code: answer.body.error.code }).toEqual({ path, status: 400, code: "invalid_json" });
    }
  });

  test("a field of the wrong type is 400 invalid_request naming the field as param", async () => {
    for (const { path, wrongField, param } of ROUTES) {
      const answer = await post(path, JSON.stringify(wrongField));
      expect({ path, status: answer.status, error: answer.body.error }).toMatchObject({
        path,
        status: 400,
        error: { type: "invalid_request_error", param, code: "invalid_request" },
      });
      expect(answer.body.error.message).toBeString();
    }
  });
});
