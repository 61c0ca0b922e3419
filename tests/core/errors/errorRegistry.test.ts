import { describe, expect, test } from "bun:test";
import {
  AgentdError,
  ERROR_CODES,
  errorBody,
  errorFromBody,
  type ErrorType,
  errorTypeFor,
  isErrorCode,
  isRelayed,
  statusOf,
} from "../../../src/core/errors/index.ts";

describe("errorTypeFor", () => {
  test("each status named by OpenAI's types maps to its type", () => {
    const expected: Array<[number, ErrorType]> = [
      [400, "invalid_request_error"],
      [401, "authentication_error"],
      [403, "permission_error"],
      [404, "not_found_error"],
      [409, "conflict_error"],
      [413, "request_too_large"],
      [429, "rate_limit_error"],
    ];
    for (const [status, type] of expected) expect({ status, type: errorTypeFor(status) }).toEqual({ status, type });
  });

  test("every 5xx is server_error; any other 4xx is invalid_request_error", () => {
    for (const status of [500, 501, 502, 503, 504, 507]) expect(errorTypeFor(status)).toBe("server_error");
    for (const status of [405, 410, 421, 422, 499]) expect(errorTypeFor(status)).toBe("invalid_request_error");
  });
});

describe("the registry", () => {
  test("every code has an error status; disk_full is 507", () => {
    for (const [code, entry] of Object.entries(ERROR_CODES)) {
      expect({ code, ok: entry.status >= 400 && entry.status <= 599 }).toEqual({ code, ok: true });
    }
    expect(statusOf("disk_full")).toBe(507);
    expect(errorTypeFor(statusOf("disk_full"))).toBe("server_error");
  });

  test("the gateway failures are server errors, not invalid_request_error", () => {
    for (const code of ["upstream_error", "upstream_timeout", "upstream_unavailable", "no_provider", "hop_timeout"] as const) {
      expect({ code, type: errorTypeFor(statusOf(code)) }).toEqual({ code, type: "server_error" });
    }
  });

  test("isErrorCode knows the registry's codes only; only relayed codes take another status", () => {
    expect(isErrorCode("invalid_json")).toBe(true);
    expect(isErrorCode("bad_request")).toBe(false);
    expect(isErrorCode("toString")).toBe(false);
    expect(isErrorCode(7)).toBe(false);
    const relayed = Object.keys(ERROR_CODES).filter((code) => isErrorCode(code) && isRelayed(code));
    expect(relayed.sort()).toEqual(["http_error", "upstream_rejected"]);
  });

  test("an AgentdError takes its status from its code; a relayed code carries the given one", () => {
    expect(new AgentdError("session_busy", "busy").status).toBe(409);
    expect(new AgentdError("upstream_rejected", "no", { status: 422 }).status).toBe(422);
    // Checked by tsc, never run.
    const wontCompile = () => [
      // @ts-expect-error: a code outside the registry does not compile.
      new AgentdError("made_up_code", "x"),
      // @ts-expect-error: a registered code that is not relayed takes no status.
      new AgentdError("not_found", "x", { status: 400 }),
    ];
    expect(wontCompile).toBeFunction();
  });
});

describe("the error body", () => {
  test("always message, type, param and code, in that order; param null when none; details when present", () => {
    const plain = errorBody(new AgentdError("upstream_timeout", "slow"));
    expect(plain).toEqual({ error: { message: "slow", type: "server_error", param: null, code: "upstream_timeout" } });
    expect(Object.keys(plain.error)).toEqual(["message", "type", "param", "code"]);
    const full = errorBody(new AgentdError("invalid_request", "bad", { param: "tools[0].name", details: { n: 1 } }));
    expect(full).toEqual({
      error: { message: "bad", type: "invalid_request_error", param: "tools[0].name", code: "invalid_request", details: { n: 1 } },
    });
  });

  test("read back from another agentd: a known code is rebuilt, an unknown one is left to the caller", () => {
    const answer = JSON.parse(JSON.stringify(errorBody(new AgentdError("pty_session_not_found", "gone", { param: "session_id" }))));
    const rebuilt = errorFromBody(answer, 404, " (on hop h)");
    expect(rebuilt).toMatchObject({ code: "pty_session_not_found", status: 404, param: "session_id", message: "gone (on hop h)" });
    expect(errorFromBody({ error: { code: "from_the_future", message: "?" } }, 418)).toBeUndefined();
    expect(errorFromBody("not an object", 500)).toBeUndefined();
    expect(errorFromBody({ error: { code: "http_error", message: "teapot" } }, 418)).toMatchObject({ code: "http_error", status: 418 });
  });
});
