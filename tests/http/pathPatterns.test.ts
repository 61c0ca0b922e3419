import { describe, expect, test } from "bun:test";
import { AGENT_DIRECT_CALL_PATHS, DECISION_PATHS } from "../../src/http/agentPeerGuard.ts";
import { matchesAnyPattern } from "../../src/http/pathPatterns.ts";

// Paths near the guarded ones: other cases, doubled slashes, prefixes, suffixes and lookalikes.
const PATHS = [
  "/api/approvals/ap_1",
  "/API/Approvals/x",
  "/api/approvals/",
  "/api/approvals",
  "/status/approvals/ap_1/decide",
  "/api/incidents/3/action",
  "/api/incidents/3/ACK",
  "/api/incidents/3/acknowledge",
  "/api/incidents/3",
  "/api/incidents/silences",
  "/api//incidents/silences/4",
  "/api/watchdog//learned",
  "/api/pty/privileged",
  "/api/pty",
  "/api/pty/p1/input",
  "//api//pty",
  "/api/ptyx",
  "/api/files/write",
  "/api/hops",
  "/api/sessions",
  "/api/sessions/",
  "/api/sessions/ses_1/messages",
  "/api/admin/reload",
  "/api//admin//reload/x",
  "/api/admin/proxy/providers/p/breaker/open",
  "/mcp",
  "//mcp/",
  "/mcpx",
  "/x/mcp",
  "/v1/chat/completions",
  "/v1/responses",
  "/status",
  "/",
  "",
];

describe("one combined expression for a list of path patterns", () => {
  test("matches exactly where one of the patterns does, for both guarded lists", () => {
    for (const list of [DECISION_PATHS, AGENT_DIRECT_CALL_PATHS]) {
      const combined = matchesAnyPattern(list);
      for (const path of PATHS) expect({ path, match: combined(path) }).toEqual({ path, match: list.some((p) => p.test(path)) });
    }
  });

  test("an empty list matches nothing", () => {
    expect(matchesAnyPattern([])("/api/approvals/1")).toBe(false);
  });

  test("patterns that cannot be joined without changing what they match are refused", () => {
    expect(() => matchesAnyPattern([/\/a/i, /\/b/])).toThrow(/share their flags/);
    expect(() => matchesAnyPattern([/\/a/g])).toThrow(/share their flags/);
    expect(() => matchesAnyPattern([/(x)\1/])).toThrow(/backreferences/);
  });
});
