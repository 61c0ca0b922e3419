import { describe, expect, test } from "bun:test";
import { parseConfig, type AgentdConfig } from "../../src/core/config/index.ts";
import { assignLive, changedKeys, combineReports, ConfigChange, valueAt } from "../../src/core/configChange.ts";

const config = (value: unknown): AgentdConfig => parseConfig(JSON.stringify(value), { file: "agentd.jsonc", env: {} });

describe("changedKeys", () => {
  test("names each changed leaf by its dotted path; a list is one key compared whole", () => {
    const before = { a: { b: 1, c: [1, 2] }, d: "x" };
    expect(changedKeys(before, { a: { b: 2, c: [1, 2] }, d: "x" })).toEqual(["a.b"]);
    expect(changedKeys(before, { a: { b: 1, c: [2, 1] }, d: "x" })).toEqual(["a.c"]);
    expect(changedKeys(before, before)).toEqual([]);
  });

  test("a key on one side only is a change: an optional setting added or removed", () => {
    expect(changedKeys({ pty: {} }, { pty: { shell: "/bin/sh" } })).toEqual(["pty.shell"]);
    expect(changedKeys({ pty: { shell: "/bin/sh" } }, { pty: {} })).toEqual(["pty.shell"]);
    // An object replaced by a scalar is named at the object.
    expect(changedKeys({ a: { b: 1 } }, { a: 5 })).toEqual(["a"]);
  });

  test("valueAt follows a dotted key and is undefined past a leaf or a missing name", () => {
    const value = { pty: { limits: { pids_max: 9 } } };
    expect(valueAt(value, "pty.limits.pids_max")).toBe(9);
    expect(valueAt(value, "pty.limits.pids_max.more")).toBeUndefined();
    expect(valueAt(value, "proxy.breaker")).toBeUndefined();
  });
});

describe("ConfigChange", () => {
  const before = config({ proxy: { retry_base_ms: 500 }, pty: { max_sessions: 4 } });

  test("compares parsed configs: defaults filled in on both sides are no change, $schema is never one", () => {
    const same = new ConfigChange(before, config({ $schema: "./schema.json", proxy: { retry_base_ms: 500 }, pty: { max_sessions: 4 } }));
    expect(same.keys).toEqual([]);
  });

  test("report sorts the keys a capability owns into applied and restart-only, and leaves the others alone", () => {
    const change = new ConfigChange(
      before,
      config({ proxy: { retry_base_ms: 100, breaker: { failures: 9 } }, pty: { max_sessions: 8, run_as: { user: "nobody" } } }),
    );
    expect(change.keys).toEqual(["proxy.breaker.failures", "proxy.retry_base_ms", "pty.max_sessions", "pty.run_as.user"]);
    expect(change.touches("proxy.breaker")).toBe(true);
    expect(change.touches("hops")).toBe(false);
    expect(change.report(["proxy"], ["proxy.breaker"])).toEqual({
      applied: ["proxy.retry_base_ms"],
      needsRestart: ["proxy.breaker.failures"],
    });
    expect(change.report(["pty"], ["pty.run_as"])).toEqual({ applied: ["pty.max_sessions"], needsRestart: ["pty.run_as.user"] });
    // A prefix is matched by whole names: "pty.max" does not hold "pty.max_sessions".
    expect(change.report(["pty"], ["pty.max"])).toEqual({ applied: ["pty.max_sessions", "pty.run_as.user"], needsRestart: [] });
  });
});

describe("a capability with a fixed list of live keys", () => {
  test("reportLive: any other key it owns needs a restart, a key added to the schema later included", () => {
    const before = config({});
    const change = new ConfigChange(before, config({ proxy: { retry_base_ms: 100, quirk_ttl_s: 60 } }));
    expect(change.reportLive(["proxy"], ["proxy.retry_base_ms"])).toEqual({
      applied: ["proxy.retry_base_ms"],
      needsRestart: ["proxy.quirk_ttl_s"],
    });
  });
});

describe("assignLive", () => {
  test("copies every setting but the restart-only ones into the object in use, and unsets one left out", () => {
    const inUse: Record<string, unknown> = { shell: "/bin/zsh", max_sessions: 4, run_as: { user: "a" }, limits: { pids_max: 8 } };
    const next = { max_sessions: 9, run_as: { user: "b" }, limits: { pids_max: 16 } };
    assignLive(inUse, next, "pty", ["pty.run_as"]);
    expect(inUse).toEqual({ max_sessions: 9, run_as: { user: "a" }, limits: { pids_max: 16 } });
    // A copy: changing the reloaded config later does not reach the object in use.
    next.limits.pids_max = 99;
    expect(inUse.limits).toEqual({ pids_max: 16 });
  });
});

describe("combineReports", () => {
  const started = config({ server: { port: 7070 }, pty: { max_sessions: 4 }, proxy: { retry_base_ms: 500 } });

  test("a key any capability needs a restart for is not applied; a key nobody claimed needs a restart", () => {
    const change = new ConfigChange(started, config({ server: { port: 7071 }, pty: { max_sessions: 8 }, proxy: { retry_base_ms: 100 } }));
    const combined = combineReports(
      change,
      [
        { applied: ["pty.max_sessions"], needsRestart: [] },
        { applied: [], needsRestart: ["pty.max_sessions"] },
      ],
      started,
    );
    expect(combined).toEqual({ applied: [], needsRestart: ["proxy.retry_base_ms", "pty.max_sessions", "server.port"] });
  });

  test("a restart-only key set back to the value agentd started with is in force again", () => {
    const moved = config({ server: { port: 7071 }, pty: { max_sessions: 4 }, proxy: { retry_base_ms: 500 } });
    const back = new ConfigChange(moved, started);
    expect(combineReports(back, [{ applied: [], needsRestart: ["server.port"] }], started)).toEqual({
      applied: ["server.port"],
      needsRestart: [],
    });
  });
});
