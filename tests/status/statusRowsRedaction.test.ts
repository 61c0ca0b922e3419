import { describe, expect, test } from "bun:test";
import { ptySessionRow, sessionRow } from "../../src/status/statusRows.ts";

const BEARER = "sk-live-Qm7Zt2Lx9Vb4Nc8Rw1Ky5";

describe("rows the status page shows go through the redactor", () => {
  test("a PTY row's command and a session's title keep no credential", () => {
    const pty = ptySessionRow({
      id: "a1",
      cmd: `curl -H "Authorization: Bearer ${BEARER}" https://api.example`,
      pid: 1,
      started: new Date(0).toISOString(),
      running: true,
      exit_code: null,
      idle_s: 0,
      bytes_out: 0,
      last_output_at: null,
    });
    expect(pty.command).toBe('curl -H "Authorization: Bearer [redacted]" https://api.example');
    const session = sessionRow({
      id: "s1",
      kind: "agent",
      client: null,
      created_at: 0,
      updated_at: 0,
      model: "m",
      target: "local",
      policy: {},
      title: `use DB_PASSWORD=hunter2-long and ${BEARER}`,
      state: "idle",
      pending_approvals: 0,
    });
    expect(session.title).toBe("use DB_PASSWORD=[redacted] and [redacted]");
  });
});
