import { describe, expect, test } from "bun:test";
import type { ActionRequest } from "../../src/watchdog/incidents/actionRequest.ts";
import type { Incident } from "../../src/watchdog/index.ts";
import { renderIncidentText } from "../../src/status/statusListText.ts";

const now = Date.parse("2026-11-25T12:00:00Z");

function incident(request: ActionRequest | null): Incident {
  return {
    id: 7,
    dedup_key: "check:db:1",
    title: "Check db failing <script>",
    category: "daemon",
    severity: "error",
    state: "open",
    first_seen: now - 60_000,
    last_seen: now - 5_000,
    count: 3,
    tier: 1,
    action: "run_command",
    verdict: null,
    details: {},
    action_request: request,
  };
}

const pending: ActionRequest = {
  id: 1,
  incident_id: 7,
  action: "run_command",
  command: "restart-db",
  tier: 1,
  reason: "rule db-down",
  status: "pending",
  requested_at: now - 5_000,
  expires_at: now + 3_600_000,
  decided_at: null,
  decided_by: null,
  finished_at: null,
  outcome: null,
};

describe("the curl view of one incident", () => {
  test("a pending command says how to decide it", () => {
    const text = renderIncidentText(incident(pending), [], now);
    expect(text).toContain("  command    restart-db   pending\n");
    expect(text).toContain("decide with: agentd incidents approve 7 | agentd incidents deny 7");
    expect(text.endsWith("\n")).toBe(true);
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(100);
  });

  test("a decided command shows who decided and the outcome, without the hint", () => {
    const text = renderIncidentText(incident({ ...pending, status: "done", decided_by: "cli", outcome: "exit 0" }), [], now);
    expect(text).toContain("  command    restart-db   done by cli: exit 0\n");
    expect(text).not.toContain("decide with");
  });

  test("when it was last seen and what its check said last, cut to the line", () => {
    const said = { ...incident(null), details: { output: `127.0.0.1:5432: connect ECONNREFUSED\n${"x".repeat(200)}` } };
    const text = renderIncidentText(said, [], now);
    expect(text).toContain("  last seen  2026-11-25 11:59:55");
    expect(text).toContain("  output     127.0.0.1:5432: connect ECONNREFUSED");
    for (const line of text.split("\n")) expect([...line].length).toBeLessThanOrEqual(100);
    expect(renderIncidentText(incident(null), [], now)).not.toContain("\n  output ");
  });

  test("no command request, no command line", () => {
    expect(renderIncidentText(incident(null), [], now)).not.toContain("\n  command ");
  });
});
