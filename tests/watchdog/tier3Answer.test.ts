import { describe, expect, test } from "bun:test";
import { checkTier3Answer } from "../../src/watchdog/decide/tier3Answer.ts";

// What a tier-3 model says is data from outside: only the exact shape its schema asks for passes.
const allowed = ["alert", "restart_worker", "run_command"] as const;

describe("checkTier3Answer", () => {
  test("a well-formed answer passes; with commands on offer, `command` is required and must name one (or be empty)", () => {
    expect(checkTier3Answer({ action: "alert", reason: "disk", confidence: 0.9 }, allowed, [])).toEqual({
      ok: true,
      answer: { action: "alert", reason: "disk", confidence: 0.9 },
    });
    expect(
      checkTier3Answer({ action: "run_command", reason: "x", confidence: 1, command: "clear-cache" }, allowed, ["clear-cache"]),
    ).toEqual({
      ok: true,
      answer: { action: "run_command", reason: "x", confidence: 1, command: "clear-cache" },
    });
    expect(checkTier3Answer({ action: "alert", reason: "x", confidence: 0, command: "" }, allowed, ["clear-cache"]).ok).toBe(true);
  });

  test("every wrong field is named, and nothing else slips through", () => {
    const cases: Array<[unknown, readonly string[], string]> = [
      [null, [], "answer: expected an object"],
      [["alert"], [], "answer: expected an object"],
      [{ action: "rm -rf", reason: "x", confidence: 1 }, [], "action: expected one of"],
      [{ action: "alert", reason: "", confidence: 1 }, [], "reason: expected a string"],
      [{ action: "alert", reason: "r".repeat(2001), confidence: 1 }, [], "reason: expected a string"],
      [{ action: "alert", reason: 7, confidence: 1 }, [], "reason: expected a string"],
      [{ action: "alert", reason: "x", confidence: 1.5 }, [], "confidence: expected a number"],
      [{ action: "alert", reason: "x", confidence: "0.9" }, [], "confidence: expected a number"],
      [{ action: "alert", reason: "x", confidence: Number.NaN }, [], "confidence: expected a number"],
      [{ action: "alert", reason: "x", confidence: 1, command: "clear-cache" }, [], 'unrecognized keys "command"'],
      [{ action: "alert", reason: "x", confidence: 1, extra: true }, ["a"], 'unrecognized keys "extra"'],
      [{ action: "alert", reason: "x", confidence: 1 }, ["clear-cache"], "command: expected one of"],
      [{ action: "run_command", reason: "x", confidence: 1, command: "rm" }, ["clear-cache"], "command: expected one of"],
    ];
    for (const [value, commands, issue] of cases) {
      const result = checkTier3Answer(value, allowed, commands);
      expect({ value, issues: result.ok ? [] : result.issues.join("; ") }).toEqual({ value, issues: expect.stringContaining(issue) });
    }
  });
});
