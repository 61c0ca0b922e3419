import { describe, expect, test } from "bun:test";
import { renderIncidentPage } from "../../src/status/statusIncidentPages.tsx";
import { incidentTimeline } from "../../src/status/statusIncidentTimeline.ts";
import type { Incident, IncidentEvent } from "../../src/watchdog/index.ts";

const now = Date.parse("2026-11-25T12:00:00Z");
const ESC = "\u001b";

function incident(over: Partial<Incident> = {}): Incident {
  return {
    id: 7,
    dedup_key: "check:db@1",
    title: "Check db failing — check:db",
    category: "daemon",
    severity: "critical",
    state: "acknowledged",
    first_seen: now - 600_000,
    last_seen: now - 5_000,
    count: 4,
    tier: 2,
    action: "alert",
    verdict: null,
    details: {
      component: "check:db",
      signal: "check.tcp",
      acknowledged_by: "alice (uid 1000) via cli",
      acknowledged_at: now - 120_000,
      learned_at: now - 60_000,
      runbook: "https://wiki.test/db",
      alerts: [{ at: now - 590_000, kind: "alert", message: "no rule" }],
    },
    action_request: null,
    ...over,
  };
}

const event = (ts: number, kind: string, message: string, fields: Record<string, unknown> = {}): IncidentEvent => ({
  id: ts,
  incident_id: 7,
  ts,
  kind,
  message,
  fields,
});

const events: IncidentEvent[] = [
  event(now - 600_000, "signal", "Check db failing", {
    check: "db",
    line: `${ESC}[31mconnect ECONNREFUSED 127.0.0.1:5432${ESC}[0m token=sk-abcdefghijklmnopqrstuvwxyz012345`,
  }),
  event(now - 590_000, "alert", "tier 2 alert sent to alertmanager"),
  event(now - 120_000, "state", "acknowledged by alice (uid 1000) via cli", { state: "acknowledged", by: "alice (uid 1000) via cli" }),
  event(now - 60_000, "silenced", "silence on db until 14:00"),
];

describe("the timeline in words", () => {
  test("each event kind says what happened; a state change says who, as stored", () => {
    expect(incidentTimeline(incident(), events).map((e) => [e.label, e.by ?? e.note ?? ""])).toEqual([
      ["first seen", ""],
      ["the watchdog saw", "Check db failing"],
      ["alert sent", "tier 2 alert sent to alertmanager"],
      ["acknowledged", "alice (uid 1000) via cli"],
      ["silenced", "silence on db until 14:00"],
      ["last seen (4 occurrences)", ""],
    ]);
  });
});

describe("the incident page", () => {
  const html = renderIncidentPage(incident(), events, now, {
    name: "db",
    kind: "tcp",
    state: "fail",
    last_change: now - 600_000,
    output: "connect ECONNREFUSED 127.0.0.1:5432",
  });

  test("who acknowledged and when, in UTC and ago; no epoch milliseconds anywhere", () => {
    expect(html).toMatch(
      /data-field="state"><span class="pill tone-warn">acknowledged<\/span> by alice \(uid 1000\) via cli, <time[^>]*>2026-11-25 11:58:00Z<\/time> \(<time[^>]*>2m ago<\/time>\)/,
    );
    expect(html).toContain("2026-11-25 11:50:00Z");
    for (const epoch of [now - 120_000, now - 60_000, now - 600_000, now - 590_000]) expect(html).not.toContain(String(epoch));
  });

  test("the check's output as it failed (colours stripped, secrets redacted) and as it is now", () => {
    expect(html).toContain('data-field="output"');
    expect(html).toMatch(/<pre class="details output">connect ECONNREFUSED 127\.0\.0\.1:5432 token=[^<]*redacted[^<]*<\/pre>/i);
    expect(html).not.toContain("sk-abcdefghijklmnopqrstuvwxyz012345");
    expect(html).not.toContain(ESC);
    expect(html).toMatch(/check <code>db<\/code> now: <span class="pill tone-fail">fail<\/span>/);
  });

  test("no raw JSON blob: other details are facts, a …_at number is a time; a JSON link stays for tools", () => {
    expect(html).not.toContain('"component":');
    expect(html).toMatch(/<dt>learned at<\/dt><dd><time[^>]*>2026-11-25 11:59:00Z<\/time>/);
    expect(html).toContain("<dt>runbook</dt><dd>https://wiki.test/db</dd>");
    expect(html).toMatch(
      /<dt>alerts<\/dt><dd><ul class="plain"><li><span class="fields">at: <time[^>]*>2026-11-25 11:50:10Z<\/time> \(<time[^>]*>9m ago<\/time>\); kind: alert; message: no rule<\/span><\/li><\/ul><\/dd>/,
    );
    expect(html).toContain('href="/status/incidents/7?format=json"');
    expect(html).toContain(`formaction="/status/incidents/7/resolve"`);
    expect(html).not.toContain(`formaction="/status/incidents/7/ack"`);
  });

  test("a check still failing: its latest output comes first, at the time it was seen, and is not repeated as an other detail", () => {
    const later = incident({
      details: { component: "check:db", output: `${ESC}[31mconnect ETIMEDOUT 127.0.0.1:5432${ESC}[0m`, output_at: now - 5_000 },
    });
    const page = renderIncidentPage(later, events, now);
    const outputs = [...page.matchAll(/<pre class="details output">([^<]*)<\/pre>/g)].map((m) => m[1]);
    expect(outputs[0]).toBe("connect ETIMEDOUT 127.0.0.1:5432");
    expect(outputs[1]).toStartWith("connect ECONNREFUSED 127.0.0.1:5432");
    expect(page).toMatch(/at <time[^>]*>2026-11-25 11:59:55Z<\/time>/);
    expect(page).not.toContain("<dt>output</dt>");
    expect(page).not.toContain("<dt>output at</dt>");

    // Failing the same way at every run: the output once, at its newest time, and the check's own row adds no copy.
    const same = "connect ECONNREFUSED 127.0.0.1:5432";
    const steady = renderIncidentPage(
      incident({ details: { component: "check:db", output: same, output_at: now - 5_000 } }),
      [event(now - 600_000, "signal", "Check db failing", { check: "db", line: same })],
      now,
      { name: "db", kind: "tcp", state: "fail", last_change: now - 600_000, output: same },
    );
    expect([...steady.matchAll(/<pre class="details output">([^<]*)<\/pre>/g)].map((m) => m[1])).toEqual([same]);
    expect(steady).toMatch(/at <time[^>]*>2026-11-25 11:59:55Z<\/time>/);
    expect(steady).toMatch(/check <code>db<\/code> now: <span class="pill tone-fail">fail<\/span>/);
  });

  test("an incident whose signals carried no output says so", () => {
    const bare = renderIncidentPage(incident({ details: {} }), [], now);
    expect(bare).toContain("No output recorded");
  });
});
