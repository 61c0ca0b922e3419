import { Hono } from "hono";
import { AgentdError } from "../errors/index.ts";
import type { IncidentState, IncidentStore } from "./incidentStore.ts";
import { SilenceStore } from "./silenceStore.ts";

const STATES = ["open", "acknowledged", "resolved", "unresolved"] as const;

function incidentId(text: string): number {
  const id = Number(text);
  if (!Number.isInteger(id) || id <= 0) throw new AgentdError("invalid_incident_id", `Cannot read "${text}" as an incident id: expected a positive integer`, { status: 400 });
  return id;
}

function boundedInt(text: string | undefined, fallback: number, max: number, name: string): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0 || value > max) throw new AgentdError("invalid_query", `Cannot use "${text}" as ${name}: expected an integer from 0 to ${max}`, { status: 400 });
  return value;
}

async function jsonBody(request: Request): Promise<Record<string, unknown>> {
  const text = await request.text();
  if (!text.trim()) return {};
  try {
    const value = JSON.parse(text) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  throw new AgentdError("invalid_json", "The request body must be a JSON object", { status: 400 });
}

/**
 * `/api/incidents`: list (?state=open|acknowledged|resolved|unresolved, ?limit, ?offset), show one
 * with its timeline, acknowledge, resolve; `/silences` lists, adds and removes maintenance silences.
 */
export function incidentRoutes(store: IncidentStore): Hono {
  const silences = new SilenceStore(store.db);
  const app = new Hono();
  app.get("/", (c) => {
    const state = c.req.query("state");
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
      throw new AgentdError("invalid_query", `Cannot filter by state "${state}": expected one of ${STATES.join(", ")}`, { status: 400 });
    }
    const filter = state as IncidentState | "unresolved" | undefined;
    const incidents = store.list({ state: filter, limit: boundedInt(c.req.query("limit"), 50, 500, "limit"), offset: boundedInt(c.req.query("offset"), 0, 1_000_000, "offset") });
    return c.json({ incidents, total: store.count(filter) });
  });
  app.get("/silences", (c) => c.json({ silences: silences.active() }));
  app.post("/silences", async (c) => {
    const body = await jsonBody(c.req.raw);
    const target = typeof body.target === "string" ? body.target : "";
    const durationMs = typeof body.duration_ms === "number" ? body.duration_ms : typeof body.duration_s === "number" ? body.duration_s * 1000 : NaN;
    const reason = typeof body.reason === "string" ? body.reason : undefined;
    return c.json({ silence: silences.add(target, durationMs, reason) }, 201);
  });
  app.delete("/silences/:id", (c) => {
    silences.remove(incidentId(c.req.param("id")));
    return c.json({ removed: true });
  });
  app.get("/:id", (c) => {
    const id = incidentId(c.req.param("id"));
    return c.json({ incident: store.get(id), timeline: store.timeline(id) });
  });
  app.post("/:id/ack", (c) => c.json({ incident: store.setState(incidentId(c.req.param("id")), "acknowledged", "api") }));
  app.post("/:id/resolve", (c) => c.json({ incident: store.setState(incidentId(c.req.param("id")), "resolved", "api") }));
  return app;
}
