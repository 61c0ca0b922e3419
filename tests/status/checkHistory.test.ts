import { describe, expect, test } from "bun:test";
import { CheckHistory } from "../../src/status/checkHistory.ts";
import { checkRowsForPage, silencedUntil } from "../../src/status/checkRows.ts";
import { renderSection } from "../../src/status/statusFragments.tsx";
import type { WatchdogCheckRow } from "../../src/status/statusSnapshot.ts";
import type { Silence } from "../../src/watchdog/index.ts";

const check = (over: Partial<WatchdogCheckRow>): WatchdogCheckRow => ({
  name: "web",
  kind: "http",
  state: "pass",
  last_change: 1000,
  ...over,
});

const silence = (target: string, until: number): Silence => ({ id: 1, target, until, reason: "deploy", created_at: 0 });

describe("CheckHistory", () => {
  test("notes a result when the state or its change time moves, not on every read; oldest first", () => {
    const history = new CheckHistory(3);
    history.observe([check({})], 1500);
    history.observe([check({})], 1600);
    history.observe([check({ state: "fail", last_change: 2000 })], 2100);
    history.observe([check({ state: "pass", last_change: 3000 })], 3100);
    expect(history.observe([check({ state: "pass", last_change: 3000 })], 3200).get("web")).toEqual([
      { state: "pass", at: 1000 },
      { state: "fail", at: 2000 },
      { state: "pass", at: 3000 },
    ]);
  });

  test("keeps the last N, and forgets a check that is gone", () => {
    const history = new CheckHistory(2);
    for (let i = 1; i <= 5; i++)
      history.observe([check({ state: i % 2 ? "fail" : "pass", last_change: i * 10 }), check({ name: "db" })], i);
    expect(history.observe([check({ state: "fail", last_change: 50 })], 6).get("web")).toEqual([
      { state: "pass", at: 40 },
      { state: "fail", at: 50 },
    ]);
    expect(history.observe([check({ state: "fail", last_change: 50 })], 7).has("db")).toBe(false);
  });

  test("a check with no change time is dated when first seen, and stays so while unchanged", () => {
    const history = new CheckHistory();
    history.observe([check({ state: "unknown", last_change: null })], 500);
    expect(history.observe([check({ state: "unknown", last_change: null })], 900).get("web")).toEqual([{ state: "unknown", at: 500 }]);
  });
});

describe("checks on the page", () => {
  test("failing first, critical before the rest, then by name", () => {
    const rows = checkRowsForPage(
      [
        check({ name: "a-pass" }),
        check({ name: "z-fail", state: "fail" }),
        check({ name: "b-fail", state: "fail" }),
        check({ name: "y-crit", state: "fail", severity: "critical" }),
        check({ name: "c-unknown", state: "unknown" }),
      ],
      [],
      new Map(),
    );
    expect(rows.map((row) => row.name)).toEqual(["y-crit", "b-fail", "z-fail", "c-unknown", "a-pass"]);
  });

  test("a silence on the check's name, its component or its kind marks it with the latest end", () => {
    expect(silencedUntil(check({}), [silence("web", 5000)])).toBe(5000);
    expect(silencedUntil(check({}), [silence("check:web", 5000), silence("check.http", 9000)])).toBe(9000);
    expect(silencedUntil(check({}), [silence("webx", 5000), silence("check:db", 9000)])).toBeUndefined();
  });

  test("the card: silenced until when, the strip with each result's time, failing row first", () => {
    const history = new CheckHistory();
    const base = Date.parse("2026-01-02T03:04:05Z");
    history.observe([check({ name: "web", state: "pass", last_change: base })], base);
    const seen = history.observe([check({ name: "web", state: "fail", last_change: base + 60_000 })], base + 60_000);
    const rows = checkRowsForPage(
      [
        check({ name: "db" }),
        check({ name: "web", state: "fail", last_change: base + 60_000, output: "connect ECONNREFUSED 127.0.0.1:5432" }),
      ],
      [silence("web", base + 2 * 3600_000)],
      seen,
    );
    const html = renderSection("watchdog", { configured: true, rows }, base + 120_000);
    expect(html).toContain("2 checks, 1 failing, 1 silenced");
    expect(html.indexOf('data-check="web"')).toBeLessThan(html.indexOf('data-check="db"'));
    expect(html).toContain('silenced until <time datetime="2026-01-02T05:04:05.000Z">2026-01-02 05:04:05Z</time> (in 1h58m)');
    expect(html).toContain('title="pass at 2026-01-02 03:04:05Z" data-state="pass"');
    expect(html).toContain('title="fail at 2026-01-02 03:05:05Z" data-state="fail"');
    expect(html).toContain("connect ECONNREFUSED 127.0.0.1:5432");
  });
});
