import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { startHarness, type Harness } from "./agentHarness.ts";
import { fakeExecTool } from "./testTools.ts";

const BUN = process.execPath;
const FIXTURE = join(import.meta.dir, "fixtures", "agentCli.ts");

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = Bun.spawn([BUN, FIXTURE, ...args], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, AGENTD_URL: "", AGENTD_TOKEN: "" },
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

describe("agent CLI", () => {
  test("run streams a turn; at an approval without a TTY it exits 3 and says how to decide; approve and debug work", async () => {
    const ran: string[] = [];
    h = await startHarness({ tools: [fakeExecTool(ran)] });
    h.upstream.enqueue(
      {
        kind: "text",
        chunks: ["Checking ", "disk."],
        toolCalls: [{ id: "x1", name: "exec_command", arguments: '{"cmd":"sudo du -sh /var"}' }],
      },
      { kind: "text", text: "/var is the biggest." },
    );
    const paused = await cli("run", "check disk usage", "--url", h.url);
    expect(paused.code).toBe(3);
    expect(paused.stdout).toContain("Checking disk.");
    const match = /agentd approve (apr_[0-9a-f]+) once\|session\|deny/.exec(paused.stderr);
    expect(match).not.toBeNull();
    expect(paused.stderr).toContain('exec_command "sudo du -sh /var"');
    expect(ran).toEqual([]);

    const approved = await cli("approve", match![1]!, "once", "--url", h.url);
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain("allow_once");
    const sessionId = h.agent.sessions().rows[0]!.id;
    await h.follow(sessionId);
    expect(ran).toEqual(["sudo du -sh /var"]);
    expect(h.db.query("SELECT decided_by FROM agent_approvals").get()).toEqual({ decided_by: "cli" });

    const again = await cli("approve", match![1]!, "deny", "--url", h.url);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already decided");

    h.upstream.enqueue({ kind: "text", text: "Nothing else to do." });
    const plain = await cli("run", "anything else?", "--url", h.url, "--session", sessionId);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toBe("Nothing else to do.\n");

    const debug = await cli("debug", sessionId, "--url", h.url);
    expect(debug.code).toBe(0);
    // A readable transcript: requests and responses, tool calls, approvals; --json gives the records.
    expect(debug.stdout).toContain("model request #1 to gpt-4o-mini");
    expect(debug.stdout).toContain("approval allow_once by cli");
    const records = await cli("debug", sessionId, "--url", h.url, "--json");
    expect(records.stdout).toContain('"kind":"model.request"');
    expect(records.stdout).toContain('"kind":"approval.decided"');

    const usage = await cli("approve", "apr_x", "maybe", "--url", h.url);
    expect(usage.code).not.toBe(0);
  });
});
