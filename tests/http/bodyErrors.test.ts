import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { agentConfigSchema, approvalsConfigSchema, createAgent, type Agent } from "../../src/agent/index.ts";
import { servicesConfigSchema } from "../../src/core/config/sections/servicesConfig.ts";
import { createLogger, setLogSink } from "../../src/core/log/index.ts";
import { openStore, type Database } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { createFileRoutes } from "../../src/files/index.ts";
import { createHopManager, hopsConfigSchema, type HopManager } from "../../src/hop/index.ts";
import { createProxy, providerConfigSchema, proxyConfigSchema } from "../../src/proxy/index.ts";
import { createPtyRoutes, ptyConfigSchema, PtyManager } from "../../src/pty/index.ts";
import { incidentRoutes } from "../../src/watchdog/incidents/incidentRoutes.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { startApp, type RunningApp } from "./appHarness.ts";

/** Every capability's body-reading route, mounted as the worker mounts them, each with a field of the wrong type. */
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

let running: RunningApp;
let db: Database;
let pty: PtyManager;
let agent: Agent;
let hops: HopManager;
let closeProxy: () => Promise<void>;

beforeAll(() => {
  setLogSink(() => {});
  const dataDir = makeTempDir("agentd-body-errors-");
  db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
  const proxy = createProxy({
    providers: [providerConfigSchema.parse({ name: "primary", base_url: "http://127.0.0.1:9/v1" })],
    config: proxyConfigSchema.parse({}),
    db,
  });
  closeProxy = () => proxy.close();
  pty = new PtyManager({ dataDir, config: ptyConfigSchema.parse({}) });
  hops = createHopManager({ db, dataDir, config: hopsConfigSchema.parse({}), selfBinaryPath: undefined, logger: createLogger("test.hop") });
  agent = createAgent({
    db,
    dataDir,
    config: { agent: agentConfigSchema.parse({}), approvals: approvalsConfigSchema.parse({}), services: servicesConfigSchema.parse([]) },
    modelBaseUrl: "http://127.0.0.1:9/v1",
    tools: [],
    logger: createLogger("test.agent"),
  });
  running = startApp({
    bodyLimitBytes: 1 << 20,
    mounts: [
      { path: "/v1", app: proxy.routes },
      { path: "/api/admin/proxy", app: proxy.adminRoutes, loopbackOnly: true },
      { path: "/api/pty", app: createPtyRoutes(pty) },
      { path: "/api/incidents", app: incidentRoutes(new IncidentStore(db)) },
      { path: "/api/files", app: createFileRoutes() },
      { path: "/api/hops", app: hops.routes },
      { path: "/api", app: agent.routes },
    ],
  });
});

afterAll(async () => {
  await running.stop();
  await agent.close();
  await hops.close();
  await pty.close();
  await closeProxy();
  db.close();
  removeTempDirs();
  setLogSink((line) => process.stdout.write(`${line}\n`));
});

async function post(path: string, body: string): Promise<{ status: number; body: { error: Record<string, unknown> } }> {
  const response = await fetch(running.url + path, { method: "POST", headers: { "content-type": "application/json" }, body });
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
