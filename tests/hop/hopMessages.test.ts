import { describe, expect, test } from "bun:test";
import { connectingMessage, readyMessage } from "../../src/hop/hopProgress.ts";
import { hopUnavailable } from "../../src/hop/hopUnavailable.ts";

describe("hopUnavailable", () => {
  test("reconnecting: hop_disconnected, says to try again, with the last attempt's error when there is one", () => {
    const error = hopUnavailable("db1", "reconnecting", "connect ECONNREFUSED");
    expect(error.code).toBe("hop_disconnected");
    expect(error.message).toBe("Hop db1 lost its connection and is reconnecting (last attempt: connect ECONNREFUSED); try again shortly");
    expect(hopUnavailable("db1", "reconnecting", undefined).message).toBe(
      "Hop db1 lost its connection and is reconnecting; try again shortly",
    );
  });

  test("closed: hop_closed, with why when known", () => {
    expect(hopUnavailable("db1", "closed", "gave up")).toMatchObject({ code: "hop_closed", message: "Hop db1 is closed: gave up" });
    expect(hopUnavailable("db1", "closed", undefined).message).toBe("Hop db1 is closed");
  });

  test("any other state: not connected yet", () => {
    for (const state of ["connecting", "connected", "fallback"] as const)
      expect(hopUnavailable("db1", state, "old error")).toMatchObject({
        code: "hop_disconnected",
        message: "Hop db1 is not connected yet",
      });
  });
});

describe("hop progress messages", () => {
  test("the chain is shown jump hosts first, ports only where they are not 22", () => {
    const chain = [
      { user: "ops", host: "bastion", port: 22 },
      { user: "root", host: "db1", port: 2222 },
    ];
    expect(connectingMessage(chain)).toBe("connecting to ops@bastion → root@db1:2222");
  });

  test("ready names the remote agentd's version, or the reason for the fallback", () => {
    expect(readyMessage("db1", "agentd", "1.2.3")).toBe("hop db1 is up (agentd 1.2.3)");
    expect(readyMessage("db1", "fallback", null, "musl host")).toBe("hop db1 is up in fallback mode: musl host");
  });
});
