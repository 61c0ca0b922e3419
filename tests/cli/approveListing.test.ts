import { expect, test } from "bun:test";
import { approveCommand, describeApproval } from "../../src/cli/commands/approve.ts";

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

test("agentd approve: the listing shows the digest's start and a bare escalation's words, quoted one by one", () => {
  const text = describeApproval({
    id: "apr_1",
    kind: "agent",
    scope: "sudo",
    tool: "exec_command",
    session_id: "ses_1",
    summary: "x",
    status: "pending",
    decided_by: null,
    command: "sudo -u 'post gres' id",
    argv: ["sudo", "-u", "post gres", "id\u202E", ""],
    digest: "0123456789abcdef".repeat(4),
  });
  expect(text).toContain('  runs as these words, without a shell: "sudo" "-u" "post gres" "id<U+202E>" ""\n');
  expect(text).toContain("  digest: 0123456789ab\n");
});

test("agentd approve <id> once sends the digest of the approval it read", async () => {
  const digest = "ab".repeat(32);
  const posted: unknown[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      if (request.method === "GET") return Response.json({ id: "apr_1", status: "pending", digest });
      posted.push(await request.json());
      return Response.json({ approval: { id: "apr_1", status: "allow_once", summary: "s" }, released: [], resumed: true });
    },
  });
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    const code = await approveCommand.run({ values: { url: `http://127.0.0.1:${server.port}` }, positionals: ["apr_1", "once"] });
    expect(code).toBe(0);
  } finally {
    process.stdout.write = write;
    await server.stop(true);
  }
  expect(posted).toEqual([{ decision: "allow_once", decided_by: "cli", digest }]);
});
