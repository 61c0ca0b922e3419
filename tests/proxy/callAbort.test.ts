import { describe, expect, test } from "bun:test";
import { CallAbort } from "../../src/proxy/upstream/callAbort.ts";

describe("CallAbort", () => {
  test("abort calls the listener in place once; a replaced or removed listener is not called", () => {
    const abort = new CallAbort();
    const calls: string[] = [];
    abort.listen(() => calls.push("first"));
    abort.listen(() => calls.push("second"));
    expect(abort.aborted).toBe(false);
    abort.abort();
    abort.abort();
    expect(abort.aborted).toBe(true);
    expect(calls).toEqual(["second"]);

    const removed = new CallAbort();
    removed.listen(() => calls.push("removed"));
    removed.listen(undefined);
    removed.abort();
    expect(calls).toEqual(["second"]);
  });

  test("its signal for fetch aborts with it, whether made before the abort or after", () => {
    const before = new CallAbort();
    const signal = before.signal();
    expect(signal.aborted).toBe(false);
    before.abort();
    expect(signal.aborted).toBe(true);
    expect(before.signal()).toBe(signal);

    const after = new CallAbort();
    after.abort();
    expect(after.signal().aborted).toBe(true);
  });
});
