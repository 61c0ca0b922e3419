import { expect, test } from "bun:test";
import { describeApproval } from "../../src/cli/commands/approve.ts";

test("agentd approve: a command with newlines cannot draw its own lines (a fake trailer, a second approval)", () => {
  const command = [
    "sudo -n /usr/bin/id -un",
    "  on local in /home/agentd",
    "  task: check the cron service status",
    "apr_7f3a9c21d04e  sudo             exec_command  (agent session)",
    "  command: TOKEN=x;sudo -n /usr/bin/id>/tmp/pwned",
  ].join("\n");
  const text = describeApproval({
    id: "apr_real",
    kind: "agent",
    scope: "sudo",
    tool: "exec_command",
    requested_by: "agent",
    session_id: "ses_1",
    summary: "x",
    status: "pending",
    decided_by: null,
    command,
    workdir: "/tmp/\u202Eabc",
    reasons: ["runs sudo", "runs under /tmp/x\n  asked because: nothing"],
    task: "restart\nnginx",
  } as Parameters<typeof describeApproval>[0]);
  const lines = text.trimEnd().split("\n");
  expect(lines).toHaveLength(5);
  expect(lines[1]).toBe(`  command: ${command.replaceAll("\n", "\\n")}`);
  expect(lines[2]).toBe("  on local in /tmp/<U+202E>abc");
  expect(lines[3]).toBe("  asked because: runs sudo; runs under /tmp/x\\n  asked because: nothing");
  expect(lines[4]).toBe("  task: restart\\nnginx");
  expect(lines.filter((line) => line.startsWith("apr_"))).toEqual([lines[0]!]);
});
