import { Hono, type Context } from "hono";
import { z } from "zod";
import { AgentdError } from "../../core/errors/index.ts";
import { ACTION_DECISIONS, DECIDERS, type ActionDecision, type Decider } from "./actionRequest.ts";
import { ActionRequestStore } from "./actionRequestStore.ts";
import type { IncidentState, IncidentStore } from "./incidentStore.ts";
import { SilenceStore } from "./silenceStore.ts";
import { checkSilenceTarget, type SilenceNames } from "./silenceTargets.ts";
import { actorLabel } from "./actorLabel.ts";
import { readObjectBody, readValidatedBody } from "../../http/requestBody.ts";
import { queryInt } from "../../http/queryNumber.ts";

const STATES = ["open", "acknowledged", "resolved", "unresolved"] as const;

function incidentId(text: string): number {
  const id = Number(text);
  if (!Number.isInteger(id) || id <= 0)
    throw new AgentdError("invalid_incident_id", `Cannot read "${text}" as an incident id: expected a positive integer`);
  return id;
}

function boundedInt(text: string | undefined, fallback: number, max: number, name: string): number {
  return queryInt(text, { name, fallback, max });
}

/** `{target, duration_ms | duration_s, reason?}`; the store refuses an empty target or a duration ≤ 0. */
const silenceBody = z.object({
  target: z.string(),
  duration_ms: z.number().optional(),
  duration_s: z.number().optional(),
  reason: z.string().optional(),
});

/** Who moves an incident: `?by=cli` from the CLI, else the API; `?user=` names the person (the CLI sends its OS user). */
function actor(c: Context): string {
  const by = c.req.query("by");
  const via = by !== undefined && (DECIDERS as readonly string[]).includes(by) ? (by as Decider) : "api";
  return actorLabel(via, c.req.query("user"));
}

/** `{decision: "allow"|"deny", decided_by?}` as JSON or as form fields. */
async function decisionBody(c: Context): Promise<{ decision: ActionDecision; decidedBy?: Decider }> {
  const { decision, decided_by: decidedBy } = await readObjectBody(c.req.raw, { form: true });
  if (typeof decision !== "string" || !(ACTION_DECISIONS as readonly string[]).includes(decision)) {
    throw new AgentdError("invalid_request", `Cannot use ${JSON.stringify(decision ?? null)} as decision: expected "allow" or "deny"`, {
      param: "decision",
    });
  }
  if (decidedBy !== undefined && (typeof decidedBy !== "string" || !(DECIDERS as readonly string[]).includes(decidedBy))) {
    throw new AgentdError(
      "invalid_request",
      `Cannot use ${JSON.stringify(decidedBy)} as decided_by: expected one of ${DECIDERS.join(", ")}`,
      { param: "decided_by" },
    );
  }
  return { decision: decision as ActionDecision, ...(decidedBy ? { decidedBy: decidedBy as Decider } : {}) };
}

/**
 * `/api/incidents`: list (?state=open|acknowledged|resolved|unresolved, ?limit, ?offset), show one
 * with its timeline, acknowledge, resolve, allow or deny the command waiting for approval (`/:id/action`); `/silences` lists, adds and removes maintenance silences.
 */
export function incidentRoutes(store: IncidentStore, silenceNames?: SilenceNames): Hono {
  const silences = new SilenceStore(store.db);
  const requests = new ActionRequestStore(store.db, store);
  const app = new Hono();
  app.get("/", (c) => {
    const state = c.req.query("state");
    if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
      throw new AgentdError("invalid_query", `Cannot filter by state "${state}": expected one of ${STATES.join(", ")}`, {
        param: "state",
      });
    }
    const filter = state as IncidentState | "unresolved" | undefined;
    const incidents = store.list({
      state: filter,
      limit: boundedInt(c.req.query("limit"), 50, 500, "limit"),
      offset: boundedInt(c.req.query("offset"), 0, 1_000_000, "offset"),
    });
    return c.json({ incidents, total: store.count(filter) });
  });
  app.get("/silences", (c) => c.json({ silences: silences.active() }));
  app.post("/silences", async (c) => {
    const body = await readValidatedBody(c.req.raw, silenceBody);
    if (silenceNames) checkSilenceTarget(body.target, silenceNames);
    const durationMs = body.duration_ms ?? (body.duration_s === undefined ? NaN : body.duration_s * 1000);
    return c.json({ silence: silences.add(body.target, durationMs, body.reason) }, 201);
  });
  app.delete("/silences/:id", (c) => {
    silences.remove(incidentId(c.req.param("id")));
    return c.json({ removed: true });
  });
  app.get("/:id", (c) => {
    const id = incidentId(c.req.param("id"));
    return c.json({ incident: store.get(id), timeline: store.timeline(id) });
  });
  app.post("/:id/ack", (c) => c.json({ incident: store.setState(incidentId(c.req.param("id")), "acknowledged", actor(c)) }));
  app.post("/:id/resolve", (c) => c.json({ incident: store.setState(incidentId(c.req.param("id")), "resolved", actor(c)) }));
  app.post("/:id/action", async (c) => {
    const id = incidentId(c.req.param("id"));
    const body = await decisionBody(c);
    const request = requests.decide(id, body.decision, body.decidedBy ?? "api", Date.now());
    return c.json({ request, incident: store.get(id) });
  });
  return app;
}
