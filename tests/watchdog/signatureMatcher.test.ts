import { describe, expect, test } from "bun:test";
import { BUILTIN_SIGNATURES } from "../../src/watchdog/checks/signatureCatalog.ts";
import { peekEventName, SignatureMatcher } from "../../src/watchdog/checks/signatureMatcher.ts";
import { signatureConfigSchema } from "../../src/core/config/sections/watchdogConfig.ts";
import { logLine } from "./watchdogHarness.ts";
import { seededRandom } from "../support/seededRandom.ts";

const matcher = new SignatureMatcher(BUILTIN_SIGNATURES);

describe("signature catalog", () => {
  test("an upstream 500 becomes upstream.server_error on the provider's component", () => {
    const signal = matcher.match(logLine("upstream.error", { provider: "openai", status: 500, cause: "http_5xx", api_key: "x" }), 1);
    expect(signal).toMatchObject({
      id: "upstream.server_error",
      category: "upstream",
      severity: "error",
      component: "provider:openai",
      fields: { provider: "openai", status: 500, cause: "http_5xx" },
    });
    expect(signal!.fields).not.toHaveProperty("api_key");
  });

  test("each upstream cause has its own signature", () => {
    const ids = ["http_429", "auth", "redirect", "connect_timeout", "first_byte_timeout", "idle_timeout", "reset", "malformed"].map(
      (cause) => matcher.match(logLine("upstream.error", { provider: "p", status: 0, cause }), 1)?.id,
    );
    expect(ids).toEqual([
      "upstream.rate_limited",
      "upstream.auth_failed",
      "upstream.redirected",
      "upstream.connect_timeout",
      "upstream.first_byte_timeout",
      "upstream.stream_idle_timeout",
      "upstream.reset",
      "upstream.malformed",
    ]);
  });

  test("a regex narrows an event: a TLS failure is told apart from a plain connect failure", () => {
    expect(
      matcher.match(logLine("upstream.error", { provider: "p", cause: "connect", message: "unable to verify the first certificate" }), 1)
        ?.id,
    ).toBe("upstream.tls");
    expect(matcher.match(logLine("upstream.error", { provider: "p", cause: "connect", message: "ECONNREFUSED" }), 1)?.id).toBe(
      "upstream.connect_failed",
    );
  });

  test("worker, PTY, tool and store events", () => {
    expect(matcher.match(logLine("http.listen_failed", { cause: "port_in_use", port: 7070 }, "worker", "error"), 1)?.id).toBe(
      "port.in_use",
    );
    expect(matcher.match(logLine("pty.limit_reached", { limit: 64 }, "pty"), 1)?.id).toBe("pty.limit_reached");
    expect(matcher.match(logLine("tool.end", { tool: "exec_command", outcome: "timeout" }, "agent"), 1)).toMatchObject({
      id: "tool.timeout",
      component: "tool:exec_command",
    });
    expect(matcher.match(logLine("tool.end", { tool: "exec_command", outcome: "ok" }, "agent"), 1)).toBeUndefined();
    expect(matcher.match("bun: SQLiteError: database is locked", 1)?.id).toBe("store.busy");
    expect(matcher.match(logLine("worker.stderr", { line: "FATAL ERROR: JavaScript heap out of memory" }, "worker", "error"), 1)?.id).toBe(
      "worker.out_of_memory",
    );
  });

  test("a client's text in a proxy.request line opens nothing; the same words from agentd do", () => {
    for (const model of ["No space left on device", "ENOMEM", "database is locked", "context_length_exceeded"])
      expect(matcher.match(logLine("proxy.request", { provider: "p", model, status: 200 }, "proxy", "info"), 1)).toBeUndefined();
    expect(matcher.match(logLine("http.disk_full", { error: "ENOSPC: No space left on device" }, "worker", "warn"), 1)?.id).toBe(
      "disk.full",
    );
  });

  test("ordinary lines match nothing", () => {
    expect(matcher.match(logLine("proxy.request", { provider: "openai", status: 200 }, "proxy", "info"), 1)).toBeUndefined();
    expect(matcher.match("plain text without trouble", 1)).toBeUndefined();
  });

  test("a signature added in config fires, by event and field or by regex", () => {
    const custom = new SignatureMatcher([
      signatureConfigSchema().parse({
        id: "billing.declined",
        title: "Card declined",
        category: "config_state",
        event: "billing.charge",
        fields: { result: ["declined", "blocked"] },
        component: "billing:{account}",
      }),
      signatureConfigSchema().parse({
        id: "nginx.upstream",
        title: "nginx upstream timed out",
        category: "upstream",
        regex: "upstream timed out \\(110",
      }),
      ...BUILTIN_SIGNATURES,
    ]);
    expect(custom.match(logLine("billing.charge", { result: "declined", account: "acme" }), 1)).toMatchObject({
      id: "billing.declined",
      component: "billing:acme",
    });
    expect(custom.match(logLine("billing.charge", { result: "ok", account: "acme" }), 1)).toBeUndefined();
    expect(custom.match("2030/01/01 [error] 12#12: *3 upstream timed out (110: Connection timed out) while reading", 1)).toMatchObject({
      id: "nginx.upstream",
      component: "worker",
    });
  });

  test("a signature needs an event or a regex", () => {
    expect(signatureConfigSchema().safeParse({ id: "x", title: "x", category: "daemon" }).success).toBe(false);
  });

  test("peekEventName reads the event without parsing", () => {
    expect(peekEventName(logLine("upstream.error"))).toBe("upstream.error");
    expect(peekEventName("not json")).toBeUndefined();
  });
});

describe("a block of lines at a time", () => {
  const slow = signatureConfigSchema().parse({
    id: "proxy.slow",
    title: "A slow proxied request",
    category: "upstream",
    event: "proxy.request",
    fields: { status: 504 },
  });
  const anchored = signatureConfigSchema().parse({ id: "bun.crash", title: "Bun crashed", category: "daemon", regex: "^bun: .*panic$" });
  const menu = [
    () => logLine("proxy.request", { provider: "p", model: "gpt", status: 200 }, "worker.proxy", "info"),
    // A client's text that a regex-only signature would match: never read on this event.
    () => logLine("proxy.request", { provider: "p", model: "ENOSPC database is locked", status: 200 }, "worker.proxy", "info"),
    () => logLine("proxy.request", { provider: "p", model: '"event":"upstream.error"', status: 504 }, "worker.proxy", "info"),
    () => logLine("upstream.error", { provider: "p", status: 500, cause: "http_5xx" }),
    () => logLine("worker.stderr", { line: "SQLiteError: database is locked" }, "worker", "error"),
    () => logLine("proxy.requests", { note: "ENOSPC" }),
    () => '{"event":"proxy.request',
    () => ' {"event":"proxy.request","model":"ENOSPC"}',
    () => '{"ts":"x","event":"proxy.request","status":504}',
    () => "bun: thread 1 panic",
    () => "No space left on device",
    () => "{}",
    () => "",
    () => "plain text",
  ];

  test("only lines match would dismiss are passed over: the signals are those of every line", () => {
    const next = seededRandom(7);
    for (const signatures of [BUILTIN_SIGNATURES, [...BUILTIN_SIGNATURES, anchored], [...BUILTIN_SIGNATURES, slow]]) {
      const m = new SignatureMatcher(signatures);
      for (let round = 0; round < 300; round++) {
        const lines = Array.from({ length: 1 + Math.floor(next() * 40) }, () => menu[Math.floor(next() * menu.length)]!());
        const block = lines.map((line) => (next() < 0.2 ? `${line}\r\n` : `${line}\n`)).join("");
        const candidates: string[] = [];
        expect(m.eachCandidate(block, (line) => candidates.push(line))).toBe(lines.length);
        const signals = (of: string[]) => of.map((line) => m.match(line, 1)).filter((signal) => signal !== undefined);
        expect(signals(candidates)).toEqual(signals(lines));
        // Candidates come in order, each a whole line of the block.
        let at = 0;
        for (const line of candidates) {
          at = lines.indexOf(line, at);
          expect(at).toBeGreaterThanOrEqual(0);
          at++;
        }
      }
    }
  });

  test("a proxy's requests are passed over unless a signature names their event", () => {
    const block =
      Array.from({ length: 300 }, () => `${menu[1]!()}\n`).join("") +
      `${logLine("upstream.error", { provider: "p", status: 500, cause: "http_5xx" })}\n`;
    const seen = (m: SignatureMatcher) => {
      const lines: string[] = [];
      m.eachCandidate(block, (line) => lines.push(line));
      return lines;
    };
    expect(seen(matcher).map(peekEventName)).toEqual(["upstream.error"]);
    expect(seen(new SignatureMatcher([...BUILTIN_SIGNATURES, slow]))).toHaveLength(301);
  });

  test("lines without an event key, thousands in one block, are each still a candidate", () => {
    const block = "{}\n".repeat(20_000);
    let count = 0;
    matcher.eachCandidate(block, () => count++);
    expect(count).toBe(20_000);
  });
});
