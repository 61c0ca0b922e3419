import { afterEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { createErrorHandler } from "../../src/web/errorResponse.ts";
import { createLogger } from "../../src/log/index.ts";
import { incidentRoutes } from "../../src/watchdog/incidentRoutes.ts";
import { IncidentStore } from "../../src/watchdog/incidentStore.ts";
import { createHarness, type Harness } from "./watchdogHarness.ts";

let harness: Harness;
afterEach(() => harness.close());

function app(store: IncidentStore): Hono {
  const root = new Hono();
  root.onError(createErrorHandler(createLogger("test")));
  root.route("/api/incidents", incidentRoutes(store));
  return root;
}

describe("/api/incidents", () => {
  test("list, show with timeline, acknowledge, resolve; bad input is a JSON error", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = store.open({ fingerprint: "worker", pattern: "worker.crashed", title: "Worker killed by SIGKILL", category: "daemon", severity: "critical", now: 1000 });
    store.addEvent(incident.id, "signal", "Worker killed by SIGKILL");
    const api = app(store);
    const list = (await (await api.request("/api/incidents?state=open")).json()) as { incidents: unknown[]; total: number };
    expect(list.total).toBe(1);
    const shown = (await (await api.request(`/api/incidents/${incident.id}`)).json()) as { incident: { title: string }; timeline: Array<{ kind: string }> };
    expect(shown.incident.title).toBe("Worker killed by SIGKILL");
    expect(shown.timeline.map((e) => e.kind)).toEqual(["signal"]);
    expect(((await (await api.request(`/api/incidents/${incident.id}/ack`, { method: "POST" })).json()) as { incident: { state: string } }).incident.state).toBe("acknowledged");
    expect(((await (await api.request(`/api/incidents/${incident.id}/resolve`, { method: "POST" })).json()) as { incident: { state: string } }).incident.state).toBe("resolved");
    expect(store.timeline(incident.id).map((e) => e.message)).toEqual(["Worker killed by SIGKILL", "acknowledged by api", "resolved by api"]);

    const missing = await api.request("/api/incidents/999");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("incident_not_found");
    const bad = await api.request("/api/incidents?state=sleeping");
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).toBe("invalid_query");
    expect((await api.request("/api/incidents/abc")).status).toBe(400);
  });

  test("silences: add, list, remove", async () => {
    harness = createHarness({});
    const api = app(new IncidentStore(harness.db));
    const created = await api.request("/api/incidents/silences", { method: "POST", body: JSON.stringify({ target: "db", duration_s: 1800, reason: "upgrade" }) });
    expect(created.status).toBe(201);
    const { silence } = (await created.json()) as { silence: { id: number; target: string } };
    expect(silence.target).toBe("db");
    expect(((await (await api.request("/api/incidents/silences")).json()) as { silences: unknown[] }).silences).toHaveLength(1);
    expect((await api.request(`/api/incidents/silences/${silence.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await api.request(`/api/incidents/silences/${silence.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await api.request("/api/incidents/silences", { method: "POST", body: "{}" })).status).toBe(400);
  });
});
