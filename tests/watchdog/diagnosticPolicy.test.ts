import { describe, expect, test } from "bun:test";
import { diagnosticArgv, judgeDiagnostic } from "../../src/watchdog/decide/diagnosticPolicy.ts";

const check = ["sh", "-c", "curl -fsS http://127.0.0.1:8080/health"];

describe("which diagnostics tier 3 may run", () => {
  test.each([
    [["systemctl", "status", "nginx"]],
    [["systemctl", "--no-pager", "-l", "status", "nginx"]],
    [["systemctl", "is-active", "nginx"]],
    [["journalctl", "-u", "nginx", "-n", "50"]],
    [["journalctl", "-u", "nginx", "--since", "-10min"]],
    [["ss", "-tlnp"]],
    [["df", "-h"]],
    [check],
  ])("allows %j", (argv) => {
    expect(judgeDiagnostic(argv, check)).toEqual({ ok: true });
  });

  test.each([
    [["systemctl", "restart", "nginx"], "changes state"],
    [["systemctl", "--now", "disable", "nginx"], "changes state"],
    [["systemctl"], "changes state"],
    [["journalctl", "--vacuum-size=1M"], "changes the journal"],
    [["journalctl", "--rotate"], "changes the journal"],
    [["journalctl", "-fu", "nginx"], "never ends"],
    [["journalctl", "--follow"], "never ends"],
    [["ss", "-K", "dst", "10.0.0.1"], "kills sockets"],
    [["ss", "-tnK"], "kills sockets"],
    [["ss", "--diag=/tmp/x"], "opens files"],
    [["rm", "-rf", "/"], "not a read-only diagnostic"],
    [["/usr/bin/systemctl", "status", "x"], "not a read-only diagnostic"],
    [["sh", "-c", "systemctl restart nginx"], "not a read-only diagnostic"],
    [[...check, "; reboot"], "not a read-only diagnostic"],
    [[], "expected an argv"],
  ])("refuses %j", (argv, why) => {
    const verdict = judgeDiagnostic(argv as string[], check);
    expect(verdict.ok).toBe(false);
    expect(verdict.ok ? "" : verdict.reason).toContain(why);
  });

  test("the check's own command is allowed only as configured, and not without a check", () => {
    expect(judgeDiagnostic(check).ok).toBe(false);
    expect(judgeDiagnostic(["sh", "-c", "curl -fsS http://127.0.0.1:8080/other"], check).ok).toBe(false);
  });

  test("systemctl and journalctl never wait for a pager", () => {
    expect(diagnosticArgv(["journalctl", "-u", "x"])).toEqual(["journalctl", "--no-pager", "-u", "x"]);
    expect(diagnosticArgv(["df", "-h"])).toEqual(["df", "-h"]);
  });
});
