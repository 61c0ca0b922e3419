import { describe, expect, test } from "bun:test";
import { parseApprovalAnswer } from "../../src/agent/terminalTranscript.ts";
import { INTERRUPT_QUESTION, parseInterruptAnswer } from "../../src/cli/interruptAnswer.ts";
import { reattachCommand } from "../../src/cli/reattachCommand.ts";

describe("the Ctrl-C question", () => {
  test("its keys: c cancels, l leaves, w or Enter watches on; d and anything else is no answer", () => {
    expect(["c", "C", "l", "L", "w", "\r"].map(parseInterruptAnswer)).toEqual(["cancel", "cancel", "leave", "leave", "watch", "watch"]);
    expect(["d", "o", "s", "x", " "].map(parseInterruptAnswer)).toEqual([undefined, undefined, undefined, undefined, undefined]);
  });

  test("shares no key with the approval question, so a key never means two things", () => {
    const approvalKeys = [..."abcdefghijklmnopqrstuvwxyz"].filter((key) => parseApprovalAnswer(key) !== undefined);
    const interruptKeys = [..."abcdefghijklmnopqrstuvwxyz"].filter((key) => parseInterruptAnswer(key) !== undefined);
    expect(approvalKeys.filter((key) => interruptKeys.includes(key))).toEqual([]);
    for (const key of interruptKeys) expect(INTERRUPT_QUESTION).toContain(`[${key}]`);
  });
});

describe("reattachCommand", () => {
  test("names the session, the next event, and the options that found the daemon, never the token", () => {
    expect(reattachCommand("ses_ab12", { after: 42 }, {})).toBe("agentd attach ses_ab12 --after 42");
    expect(
      reattachCommand("ses_ab12", { after: 7 }, { url: "http://127.0.0.1:7070", token: "secret", "data-dir": "/srv/my data", model: "x" }),
    ).toBe("agentd attach ses_ab12 --after 7 --url http://127.0.0.1:7070 --data-dir '/srv/my data'");
    expect(reattachCommand("ses_1", { after: 0 }, { config: "it's.jsonc" })).toBe(
      "agentd attach ses_1 --after 0 --config 'it'\\''s.jsonc'",
    );
  });
});
