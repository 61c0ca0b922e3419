import { describe, expect, test } from "bun:test";
import { describeReload } from "../../src/cli/reloadSummary.ts";

const URL = "http://127.0.0.1:7070";

describe("what agentd reload prints", () => {
  test("nothing changed says so in one line", () => {
    expect(describeReload(URL, { result: "reloaded", applied: [], needs_restart: [] })).toBe(
      `agentd at ${URL} reloaded its config: no setting changed\n`,
    );
  });

  test("the count of changed keys, then those applied and those that wait for a restart", () => {
    expect(describeReload(URL, { result: "reloaded", applied: ["providers", "pty.max_sessions"], needs_restart: ["server.port"] })).toBe(
      [
        `agentd at ${URL} reloaded its config: 3 settings changed`,
        "  applied:",
        "    providers",
        "    pty.max_sessions",
        "  needs a restart of agentd to apply (until then the old value stays in force):",
        "    server.port",
        "",
      ].join("\n"),
    );
  });

  test("one key is one setting; a list left out is an empty one", () => {
    expect(describeReload(URL, { result: "reloaded", needs_restart: ["log.level"] })).toBe(
      [
        `agentd at ${URL} reloaded its config: 1 setting changed`,
        "  needs a restart of agentd to apply (until then the old value stays in force):",
        "    log.level",
        "",
      ].join("\n"),
    );
  });
});
