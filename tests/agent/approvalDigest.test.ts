import { createHash } from "node:crypto";
import { afterEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { approvalDigest, canonicalJson } from "../../src/agent/approvalDigest.ts";
import { namedUser } from "../../src/core/shell/escalationWords.ts";
import { decideWatchdog, watchdogQueued } from "../../src/agent/approvalQueue.ts";
import type { PendingActionRequest, WatchdogApprovals } from "../../src/watchdog/index.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { createErrorHandler } from "../../src/http/errorResponse.ts";
import { decisionRoutes } from "../../src/status/decisionRoutes.ts";
import { startHarness, type Harness } from "./agentHarness.ts";
import { fakeExecTool } from "./testTools.ts";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("the digest a decision is bound to (pure)", () => {
  test("canonical JSON sorts keys at every depth and drops undefined fields", () => {
    expect(canonicalJson({ b: 1, a: { d: [1, "x", null], c: undefined } })).toBe('{"a":{"d":[1,"x",null]},"b":1}');
    expect(canonicalJson({ a: 1, b: 2 })).toBe(canonicalJson({ b: 2, a: 1 }));
  });

  test("covers the argv (or the command), the user, the directory and the host", () => {
    const argv = ["sudo", "-u", "postgres", "psql"];
    expect(approvalDigest({ argv, target: "local" })).toBe(
      sha256('{"argv":["sudo","-u","postgres","psql"],"cwd":null,"target":"local","user":"postgres"}'),
    );
    expect(approvalDigest({ command: "uptime", workdir: "/srv", target: "web1" })).toBe(
      sha256('{"command":"uptime","cwd":"/srv","target":"web1","user":null}'),
    );
    const base = approvalDigest({ argv, target: "local" });
    for (const other of [
      { argv: ["sudo", "-u", "postgres", "psql "], target: "local" },
      { argv: ["sudo", "-u", "postgre", "psql"], target: "local" },
      { argv, workdir: "/", target: "local" },
      { argv, target: "db1" },
      { command: "sudo -u postgres psql", target: "local" },
    ])
      expect(approvalDigest(other)).not.toBe(base);
    // A tool that runs no command is bound to its arguments.
    expect(approvalDigest({ arguments: { path: "/etc/x", content: "a" }, target: "local" })).not.toBe(
      approvalDigest({ arguments: { path: "/etc/x", content: "b" }, target: "local" }),
    );
  });

  test("the user a bare escalation runs as, when named", () => {
    expect(namedUser(["sudo", "-u", "postgres", "id"])).toBe("postgres");
    expect(namedUser(["sudo", "-upostgres", "id"])).toBe("postgres");
    expect(namedUser(["sudo", "-n", "--user=www-data", "id"])).toBe("www-data");
    expect(namedUser(["/usr/bin/sudo", "-g", "adm", "-u", "backup", "id"])).toBe("backup");
    expect(namedUser(["sudo", "systemctl", "restart", "nginx"])).toBeNull();
    expect(namedUser(["sudo", "-g", "adm", "id", "-u", "root"])).toBeNull();
    expect(namedUser(["sudo", "--", "id", "-u", "root"])).toBeNull();
  });
});

describe("decisions name the digest", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  async function pendingSudo(ran: string[], cmd: string) {
    h = await startHarness({ tools: [fakeExecTool(ran)] });
    h.upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "s1", name: "exec_command", arguments: JSON.stringify({ cmd }) }] },
      { kind: "text", text: "ok" },
    );
    const session = await h.createSession();
    const required = (await h.send(session, "go")).at(-1)!;
    const { approvals } = (await (await h.api("/api/approvals")).json()) as { approvals: any[] };
    return { session, required, approval: approvals[0]! };
  }

  test("/api/approvals shows the digest and a bare escalation's words; another digest is refused with 409 and runs nothing", async () => {
    const ran: string[] = [];
    const { session, required, approval } = await pendingSudo(ran, "sudo -u nobody id");
    expect(approval.argv).toEqual(["sudo", "-u", "nobody", "id"]);
    expect(approval.digest).toBe(sha256('{"argv":["sudo","-u","nobody","id"],"cwd":null,"target":"local","user":"nobody"}'));

    const wrong = await h!.api(`/api/approvals/${approval.id}`, { json: { decision: "allow_once", digest: "0".repeat(64) } });
    expect(wrong.status).toBe(409);
    const refusal = (await wrong.json()) as any;
    expect(refusal.error.code).toBe("approval_changed");
    expect(refusal.error.message).toContain("nothing was run");
    expect(h!.agent.pendingApprovals().map((a) => a.id)).toEqual([approval.id]);
    expect((await h!.api(`/api/approvals/${approval.id}`, { json: { decision: "allow_once", digest: "abc" } })).status).toBe(400);

    const right = await h!.api(`/api/approvals/${approval.id}`, { json: { decision: "allow_once", digest: approval.digest } });
    expect(right.status).toBe(200);
    await h!.follow(session, Number(required.id));
    expect(ran).toEqual(["sudo -u nobody id"]);
  });

  test("a command that is no bare escalation has no argv; its digest covers the command text", async () => {
    const ran: string[] = [];
    const { approval } = await pendingSudo(ran, "sudo id | tee /tmp/x");
    expect(approval.argv).toBeUndefined();
    expect(approval.digest).toBe(sha256('{"command":"sudo id | tee /tmp/x","cwd":null,"target":"local","user":null}'));
  });

  test("the page's form: its digest is checked, a refusal is swapped in (htmx) or answered 409 (JSON)", async () => {
    const ran: string[] = [];
    const { session, required, approval } = await pendingSudo(ran, "sudo systemctl restart nginx");
    const page = new Hono();
    page.onError(createErrorHandler(createLogger("test")));
    page.route("/", decisionRoutes({ approval: (id, decision, by, digest) => h!.agent.decideApproval(id, decision, by, digest) }));
    const post = (body: string, htmx: boolean) =>
      page.request(`/status/approvals/${approval.id}/decide`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          ...(htmx ? { "hx-request": "true" } : { accept: "application/json" }),
        },
        body,
      });
    const stale = `decision=allow_once&digest=${"f".repeat(64)}`;
    const swapped = await post(stale, true);
    expect(swapped.status).toBe(200);
    expect(await swapped.text()).toContain("not what was decided on");
    const json = await post(stale, false);
    expect(json.status).toBe(409);
    expect(((await json.json()) as any).error.code).toBe("approval_changed");
    expect(ran).toEqual([]);

    const done = await post(`decision=allow_once&digest=${approval.digest}`, true);
    expect(await done.text()).toContain("Allowed once");
    await h!.follow(session, Number(required.id));
    expect(ran).toEqual(["sudo systemctl restart nginx"]);
  });
});

test("a watchdog command's decision through /api/approvals is bound to its digest too", () => {
  const request: PendingActionRequest = {
    id: 7,
    incident_id: 3,
    action: "run_command",
    command: "systemctl restart nginx",
    tier: 1,
    reason: "rule nginx",
    status: "pending",
    requested_at: 1,
    expires_at: 2,
    decided_at: null,
    decided_by: null,
    finished_at: null,
    outcome: null,
    incident_title: "nginx down",
    incident_severity: "error",
  };
  const decided: number[] = [];
  const approvals: WatchdogApprovals = {
    pending: () => [request],
    decide: (id, decision, by) => {
      decided.push(id);
      return { ...request, status: decision === "allow" ? "allowed" : "denied", decided_by: by };
    },
  };
  const { digest } = watchdogQueued(request);
  expect(digest).toBe(sha256('{"command":"systemctl restart nginx","cwd":null,"target":"local","user":null}'));
  expect(() => decideWatchdog(approvals, 7, "allow_once", "api", "1".repeat(64))).toThrow(
    expect.objectContaining({ code: "approval_changed" }),
  );
  expect(decided).toEqual([]);
  expect(decideWatchdog(approvals, 7, "allow_once", "cli", digest).approval.status).toBe("allowed");
  expect(decideWatchdog(approvals, 7, "deny", "api").approval.status).toBe("denied");
  expect(decided).toEqual([7, 7]);
});
