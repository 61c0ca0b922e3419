import { describe, expect, test } from "bun:test";
import { amSilenceAuthor, planAmSilences, type AmSilence, type WantedSilence } from "../../src/watchdog/actions/alertmanagerSilences.ts";
import { incidentSilenceTargets, silenceCovering } from "../../src/watchdog/incidents/silenceTargets.ts";
import type { Silence } from "../../src/watchdog/incidents/silenceStore.ts";

const NOW = Date.parse("2026-01-01T00:00:00Z");
const HOUR = 3_600_000;

function amSilence(id: string, incident: string, endsAt: number, over: Partial<AmSilence> = {}): AmSilence {
  return {
    id,
    matchers: [
      { name: "alertname", value: "AgentdIncident", isRegex: false, isEqual: true },
      { name: "host", value: "web1", isRegex: false, isEqual: true },
      { name: "incident", value: incident, isRegex: false, isEqual: true },
    ],
    startsAt: new Date(NOW - HOUR).toISOString(),
    endsAt: new Date(endsAt).toISOString(),
    createdBy: amSilenceAuthor("web1"),
    comment: "",
    status: { state: "active" },
    ...over,
  };
}

const want = (incidentId: number, until: number, silenceId = 1): WantedSilence => ({
  incidentId,
  until,
  silenceId,
  target: "web",
  reason: "maintenance",
});

describe("planAmSilences: Alertmanager's silences follow agentd's", () => {
  test("a covered incident without a silence gets one matching its alert, ending when agentd's does", () => {
    const plan = planAmSilences([], [want(7, NOW + 2 * HOUR, 3)], "web1", NOW);
    expect(plan.expire).toEqual([]);
    expect(plan.create).toHaveLength(1);
    const { silence } = plan.create[0]!;
    expect(silence.matchers.map((m) => `${m.name}=${m.value}`)).toEqual(["alertname=AgentdIncident", "host=web1", "incident=7"]);
    expect(silence.matchers.every((m) => !m.isRegex && m.isEqual === true)).toBe(true);
    expect(Date.parse(silence.endsAt)).toBe(NOW + 2 * HOUR);
    expect(silence.createdBy).toBe("agentd@web1");
    expect(silence.comment).toContain("#3 on web: maintenance");
  });

  test("an existing silence with the same end is kept, not made twice (a restarted supervisor)", () => {
    const plan = planAmSilences([amSilence("a", "7", NOW + 2 * HOUR + 400)], [want(7, NOW + 2 * HOUR)], "web1", NOW);
    expect(plan).toEqual({ create: [], expire: [] });
  });

  test("a lifted silence is expired; a renewed one is replaced", () => {
    const existing = [amSilence("lifted", "7", NOW + HOUR), amSilence("old", "8", NOW + HOUR)];
    const plan = planAmSilences(existing, [want(8, NOW + 3 * HOUR)], "web1", NOW);
    expect(plan.create.map((c) => c.incidentId)).toEqual([8]);
    expect(plan.expire.sort()).toEqual(["lifted", "old"]);
  });

  test("silences of people, of other hosts and expired ones are never touched", () => {
    const existing = [
      amSilence("person", "7", NOW + HOUR, { createdBy: "alice" }),
      amSilence("other-host", "7", NOW + HOUR, { createdBy: amSilenceAuthor("web2"), matchers: [] }),
      amSilence("expired", "7", NOW - 1000, { status: { state: "expired" } }),
    ];
    expect(planAmSilences(existing, [], "web1", NOW)).toEqual({ create: [], expire: [] });
  });

  test("a silence already over is not created", () => {
    expect(planAmSilences([], [want(7, NOW)], "web1", NOW).create).toEqual([]);
  });
});

describe("silenceCovering: which agentd silence covers a stored incident", () => {
  const silence = (id: number, target: string, until: number): Silence => ({ id, target, until, reason: null, created_at: NOW });
  const incident = { fingerprint: "check:web", pattern: "check.http+http:503", details: { component: "check:web" } };

  test("by check name, component or signal id; http statuses are not targets", () => {
    expect(incidentSilenceTargets(incident).sort()).toEqual(["check.http", "check:web", "web"]);
    expect(silenceCovering(incident, [silence(1, "web", NOW + HOUR)])?.id).toBe(1);
    expect(silenceCovering(incident, [silence(1, "check:web", NOW + HOUR)])?.id).toBe(1);
    expect(silenceCovering(incident, [silence(1, "check.http", NOW + HOUR)])?.id).toBe(1);
    expect(silenceCovering(incident, [silence(1, "http:503", NOW + HOUR), silence(2, "db", NOW + HOUR)])).toBeUndefined();
  });

  test("the longest of several covering silences wins", () => {
    expect(silenceCovering(incident, [silence(1, "web", NOW + HOUR), silence(2, "check:web", NOW + 2 * HOUR)])?.id).toBe(2);
  });
});
