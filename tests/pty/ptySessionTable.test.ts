import { describe, expect, test } from "bun:test";
import { PtySessionTable } from "../../src/pty/ptySessionTable.ts";
import { recordingLogger } from "../support/recordingLogger.ts";

interface Row {
  id: string;
  lastUsedAt: number;
  running: boolean;
}

function tableOf(count: number, running = true) {
  const log = recordingLogger();
  const table = new PtySessionTable<Row>(log);
  for (let index = 0; index < count; index++) table.add({ id: `s${index}`, lastUsedAt: index, running });
  return { table, log };
}

describe("PtySessionTable", () => {
  test("an unknown id is pty_session_not_found naming the id; find answers undefined", () => {
    const { table } = tableOf(1);
    expect(table.get("s0").id).toBe("s0");
    expect(table.find("nope")).toBeUndefined();
    expect(() => table.get("nope")).toThrow(
      expect.objectContaining({ code: "pty_session_not_found", message: expect.stringContaining('"nope"') }),
    );
  });

  test("holds tells a session from another one that took its id", () => {
    const { table } = tableOf(0);
    const first = { id: "a", lastUsedAt: 0, running: true };
    table.add(first);
    expect(table.holds(first)).toBe(true);
    table.add({ ...first });
    expect(table.holds(first)).toBe(false);
  });

  test("free slots are taken without a victim; slots being started count towards the limit", () => {
    const { table } = tableOf(1);
    expect(table.reserveSlot(3)).toEqual({});
    expect(table.reserveSlot(3)).toEqual({});
    // One open session and two opens still starting: the third open finds no free slot and no victim.
    expect(() => table.reserveSlot(3)).toThrow(expect.objectContaining({ code: "pty_slots_busy" }));
    table.releaseSlot();
    expect(table.reserveSlot(3)).toEqual({});
  });

  test("at the limit the least recently used session outside the recent ones leaves the table as the victim", () => {
    const { table } = tableOf(10);
    const { victim } = table.reserveSlot(10);
    expect(victim?.id).toBe("s0");
    expect(table.find("s0")).toBeUndefined();
    expect(table.size).toBe(9);
    // The victim's slot is now the new open's: a second open at once takes the next oldest.
    expect(table.reserveSlot(10).victim?.id).toBe("s1");
  });

  test("when every session is among the most recent, an open is refused and the refusal is logged", () => {
    const { table, log } = tableOf(4);
    expect(() => table.reserveSlot(4)).toThrow(expect.objectContaining({ code: "pty_limit_reached" }));
    expect(table.size).toBe(4);
    expect(log.lines).toEqual([{ level: "warn", event: "pty.limit_reached", fields: { max_sessions: 4, evicted: null, starting: 0 } }]);
  });

  test("takeAll empties the table and gives back what was in it; a new id is 8 hex digits", () => {
    const { table } = tableOf(3);
    expect(table.newId()).toMatch(/^[0-9a-f]{8}$/);
    expect(table.takeAll().map((row) => row.id)).toEqual(["s0", "s1", "s2"]);
    expect(table.size).toBe(0);
    expect(table.values()).toEqual([]);
  });
});
