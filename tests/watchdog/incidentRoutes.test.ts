import { afterEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { createErrorHandler } from "../../src/http/errorResponse.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { incidentRoutes } from "../../src/watchdog/incidents/incidentRoutes.ts";
import { IncidentStore } from "../../src/watchdog/incidents/incidentStore.ts";
import { ActionRequestStore } from "../../src/watchdog/incidents/actionRequestStore.ts";
import { decisionRoutes } from "../../src/status/decisionRoutes.ts";
import { renderIncidentPage } from "../../src/status/statusIncidentPages.tsx";
import { createHarness, type Harness } from "./watchdogHarness.ts";

let harness: Harness;
afterEach(() => harness.close());

function app(store: IncidentStore): Hono {
  const root = new Hono();
  root.onError(createErrorHandler(createLogger("test")));
  root.route("/api/incidents", incidentRoutes(store));
  // The page's Allow/Deny buttons post to the status page's route, which calls the same store.
  const requests = new ActionRequestStore(store.db, store);
  root.route("/", decisionRoutes({ incidentAction: (id, decision, by) => requests.decide(id, decision, by, Date.now()) }));
  return root;
}

describe("/api/incidents", () => {
  test("an ack names the person the CLI sends (?user=); a name that cannot be a user name is refused, not stored", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = store.open({
      fingerprint: "worker",
      pattern: "worker.crashed",
      title: "Worker",
      category: "daemon",
      severity: "critical",
      now: 1000,
    });
    const api = app(store);
    const refused = await api.request(`/api/incidents/${incident.id}/ack?by=cli&user=${encodeURIComponent("<img src=x>")}`, {
      method: "POST",
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { code: string; param: string } }).error).toMatchObject({
      code: "invalid_request",
      param: "user",
    });
    expect(store.get(incident.id).state).toBe("open");
    const acked = await api.request(`/api/incidents/${incident.id}/ack?by=cli&user=alice.smith`, { method: "POST" });
    expect(((await acked.json()) as { incident: { details: Record<string, unknown> } }).incident.details.acknowledged_by).toBe(
      "cli:alice.smith",
    );
    expect(store.timeline(incident.id).map((e) => e.message)).toEqual(["acknowledged by cli:alice.smith"]);
  });

  test("list, show with timeline, acknowledge, resolve; bad input is a JSON error", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = store.open({
      fingerprint: "worker",
      pattern: "worker.crashed",
      title: "Worker killed by SIGKILL",
      category: "daemon",
      severity: "critical",
      now: 1000,
    });
    store.addEvent(incident.id, "signal", "Worker killed by SIGKILL");
    const api = app(store);
    const list = (await (await api.request("/api/incidents?state=open")).json()) as { incidents: unknown[]; total: number };
    expect(list.total).toBe(1);
    const shown = (await (await api.request(`/api/incidents/${incident.id}`)).json()) as {
      incident: { title: string };
      timeline: Array<{ kind: string }>;
    };
    expect(shown.incident.title).toBe("Worker killed by SIGKILL");
    expect(shown.timeline.map((e) => e.kind)).toEqual(["signal"]);
    expect(
      ((await (await api.request(`/api/incidents/${incident.id}/ack`, { method: "POST" })).json()) as { incident: { state: string } })
        .incident.state,
    ).toBe("acknowledged");
    expect(
      ((await (await api.request(`/api/incidents/${incident.id}/resolve`, { method: "POST" })).json()) as { incident: { state: string } })
        .incident.state,
    ).toBe("resolved");
    expect(store.timeline(incident.id).map((e) => e.message)).toEqual([
      "Worker killed by SIGKILL",
      "acknowledged by api",
      "resolved by api",
    ]);

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
    const created = await api.request("/api/incidents/silences", {
      method: "POST",
      body: JSON.stringify({ target: "db", duration_s: 1800, reason: "upgrade" }),
    });
    expect(created.status).toBe(201);
    const { silence } = (await created.json()) as { silence: { id: number; target: string } };
    expect(silence.target).toBe("db");
    expect(((await (await api.request("/api/incidents/silences")).json()) as { silences: unknown[] }).silences).toHaveLength(1);
    expect((await api.request(`/api/incidents/silences/${silence.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await api.request(`/api/incidents/silences/${silence.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await api.request("/api/incidents/silences", { method: "POST", body: "{}" })).status).toBe(400);
  });
});

describe("/api/incidents/:id/action", () => {
  /** An incident whose run_command waits for a decision (requested now, expiring in an hour). */
  function pending(store: IncidentStore, command = "fix") {
    const incident = store.open({
      fingerprint: `c-${command}`,
      pattern: "app.disk_full",
      title: "Disk full",
      category: "config_state",
      severity: "error",
      now: Date.now(),
    });
    new ActionRequestStore(store.db, store).create({
      incidentId: incident.id,
      command,
      tier: 1,
      reason: "rule free-space",
      now: Date.now(),
      expiresAt: Date.now() + 3_600_000,
    });
    return incident;
  }
  const post = (api: Hono, id: number, body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
    api.request(`/api/incidents/${id}/action`, { method: "POST", body, headers });
  const postFromPage = (api: Hono, id: number, body: string, headers: Record<string, string>) =>
    api.request(`/status/incidents/${id}/action`, { method: "POST", body, headers });

  test("JSON: allow once, then 409 action_already_decided; GET shows the request", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = pending(store);
    const api = app(store);
    const shown = (await (await api.request(`/api/incidents/${incident.id}`)).json()) as {
      incident: { action_request: { status: string; command: string } };
    };
    expect(shown.incident.action_request).toMatchObject({ status: "pending", command: "fix" });

    const allowed = await post(api, incident.id, JSON.stringify({ decision: "allow" }));
    expect(allowed.status).toBe(200);
    const body = (await allowed.json()) as {
      request: { status: string; decided_by: string };
      incident: { action_request: { status: string } };
    };
    expect(body.request).toMatchObject({ status: "allowed", decided_by: "api" });
    expect(body.incident.action_request.status).toBe("allowed");

    const again = await post(api, incident.id, JSON.stringify({ decision: "deny" }));
    expect(again.status).toBe(409);
    const error = ((await again.json()) as { error: { code: string; message: string } }).error;
    expect(error.code).toBe("action_already_decided");
    expect(error.message).toContain("allowed by api");
    expect(store.timeline(incident.id).map((e) => e.message)).toEqual(["run_command fix allowed by api"]);
  });

  test("form-encoded from the CLI's decided_by, and bad input is a JSON error", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = pending(store);
    const none = store.open({ fingerprint: "x", pattern: "p", title: "no request", category: "daemon", severity: "error", now: 1 });
    const api = app(store);
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const cases: Array<[number, string, Record<string, string>, number, string]> = [
      [incident.id, "decision=maybe", form, 400, "invalid_request"],
      [
        incident.id,
        JSON.stringify({ decision: "allow", decided_by: "robot" }),
        { "content-type": "application/json" },
        400,
        "invalid_request",
      ],
      [incident.id, "{not json", { "content-type": "application/json" }, 400, "invalid_json"],
      [none.id, JSON.stringify({ decision: "allow" }), { "content-type": "application/json" }, 409, "no_action_request"],
      [999, JSON.stringify({ decision: "allow" }), { "content-type": "application/json" }, 404, "incident_not_found"],
    ];
    for (const [id, body, headers, status, code] of cases) {
      const response = await post(api, id, body, headers);
      expect({ body, status: response.status, code: ((await response.json()) as { error: { code: string } }).error.code }).toEqual({
        body,
        status,
        code,
      });
    }
    const denied = await post(api, incident.id, "decision=deny&decided_by=cli", form);
    expect(denied.status).toBe(200);
    expect(((await denied.json()) as { request: unknown }).request).toMatchObject({ status: "denied", decided_by: "cli" });
  });

  test("from the page (HX-Request): an escaped HTML fragment, the decider recorded as page; a second click says it was decided", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = pending(store, "<b>fix</b>&co");
    const api = app(store);
    const headers = { "content-type": "application/x-www-form-urlencoded", "hx-request": "true" };
    const first = await postFromPage(api, incident.id, "decision=allow", headers);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toStartWith("text/html");
    const html = await first.text();
    expect(html).toContain('data-status="allowed"');
    expect(html).toContain("run_command &lt;b&gt;fix&lt;/b&gt;&amp;co: allowed by page");
    expect(html).not.toContain("<b>");
    const second = await postFromPage(api, incident.id, "decision=deny", headers);
    expect(second.status).toBe(200);
    const conflict = await second.text();
    expect(conflict).toContain('data-error="action_already_decided"');
    expect(conflict).not.toContain("<b>");
    expect(store.get(incident.id).action_request).toMatchObject({ status: "allowed", decided_by: "page" });
  });

  test("a form posted without JavaScript is sent back to the incident's page", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = pending(store);
    const response = await postFromPage(app(store), incident.id, "decision=allow", {
      "content-type": "application/x-www-form-urlencoded",
      accept: "text/html,application/xhtml+xml",
    });
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/status/incidents/${incident.id}`);
    expect(store.get(incident.id).action_request?.status).toBe("allowed");
  });

  test("the incident page shows Allow/Deny while pending (disabled in flight), and the outcome afterwards", async () => {
    harness = createHarness({});
    const store = new IncidentStore(harness.db);
    const incident = pending(store, "fix<x>");
    const page = renderIncidentPage(store.get(incident.id), store.timeline(incident.id), Date.now());
    expect(page).toContain("Command approval");
    expect(page).toContain(`hx-post="/status/incidents/${incident.id}/action"`);
    expect(page).toContain(`method="post" action="/status/incidents/${incident.id}/action"`);
    expect(page).toMatch(/hx-disabled-elt="#action-request-\d+ button"/);
    expect(page).toContain('name="decision" value="allow"');
    expect(page).toContain('name="decision" value="deny"');
    expect(page).toContain("run_command fix&lt;x&gt;");
    new ActionRequestStore(harness.db, store).decide(incident.id, "deny", "cli", Date.now());
    const after = renderIncidentPage(store.get(incident.id), store.timeline(incident.id), Date.now());
    expect(after).not.toContain('name="decision"');
    expect(after).toContain("denied by cli");
  });
});
