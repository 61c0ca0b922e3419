import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary, PROJECT_ROOT } from "../support/binary.ts";
import { daemonToken } from "../support/daemonTokens.ts";
import { openBrowser, type BrowserSession } from "../support/browser.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, parseSseEvents, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// A pending approval granted from /status in Chromium, against the compiled ./agentd: the real
// worker (agent, proxy, PTY tools) with a scripted model upstream; the command really runs.

const GATE = "agentd-e2e-page-gate";

let upstream: ScriptedUpstream;
let daemon: DaemonProcess;
let browser: BrowserSession;
let work: string;

const runs = () => {
  const file = join(work, "page-gated.log");
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
};

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream();
  work = makeTempDir("agentd-page-approval-work-");
  // The command runs as the command user (agentd starts as root here): it writes there.
  chmodSync(work, 0o777);
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-page-approval-data-"),
    config: {
      providers: [{ name: "scripted", base_url: upstream.url }],
      agent: { model: "gpt-test" },
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
    },
  });
  browser = await openBrowser({ signedIn: { url: daemon.url, token: daemonToken(daemon.url) } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
  await upstream?.close();
  removeTempDirs();
}, 60_000);

describe("approvals on the status page of ./agentd", () => {
  test("Allow once, double-clicked, sends one decision and the command runs once", async () => {
    const command = `echo ran >> ${join(work, "page-gated.log")} # ${GATE}`;
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "c1", name: "exec_command", arguments: JSON.stringify({ cmd: command }) }] },
      { kind: "text", text: "ran it" },
    );
    const { id } = await api<{ id: string }>(daemon.url, "/api/sessions", { body: {}, expect: 201 });
    const stream = await fetch(`${daemon.url}/api/sessions/${id}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "run the gated command" }),
      signal: AbortSignal.timeout(60_000),
    });
    // The turn pauses on the approval; its stream ends there.
    const events = parseSseEvents(await stream.text());
    expect(events.at(-1)!.type).toBe("approval_required");
    const approvalId = events.at(-1)!.data.approvals[0].approval_id as string;
    expect(runs()).toEqual([]);

    const { page, errors, requests } = browser;
    await page.goto(`${daemon.url}/status`);
    const item = page.locator("#section-approvals li").filter({ hasText: GATE });
    await item.waitFor({ timeout: 30_000 });
    await item.getByRole("button", { name: "Allow once" }).dblclick();
    await item.getByText("Allowed once").waitFor({ timeout: 30_000 });

    const view = await waitFor(
      "the turn to finish",
      async () => {
        const v = await api<{
          session: { state: string };
          turns: Array<{ status: string; end_reason: string }>;
          messages: Array<{ body: { content?: string } }>;
        }>(daemon.url, `/api/sessions/${id}`);
        return v.session.state === "idle" && v.turns[0]?.status === "done" ? v : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(view.turns[0]!.end_reason).toBe("stop");
    expect(view.messages.at(-1)!.body.content).toBe("ran it");
    expect(runs()).toEqual(["ran"]);
    expect(upstream.completionRequests()).toHaveLength(2);
    expect(requests.filter((r) => r.includes("/status/approvals/"))).toHaveLength(1);
    expect(await api(daemon.url, `/api/approvals/${approvalId}`)).toMatchObject({ status: "allow_once", decided_by: "page" });
    expect((await api<{ approvals: unknown[] }>(daemon.url, "/api/approvals")).approvals).toEqual([]);
    expect(errors).toEqual([]);
    expect(requests.every((r) => r.startsWith(daemon.url))).toBe(true);
    mkdirSync(join(PROJECT_ROOT, "tests", "e2e", "artifacts"), { recursive: true });
    await page.screenshot({ path: join(PROJECT_ROOT, "tests", "e2e", "artifacts", "status-approval-binary.png"), fullPage: true });
    // The next poll drops the decided approval from the section.
    await page.locator("#section-approvals").getByText("Nothing is waiting for approval.").waitFor({ timeout: 30_000 });
    expect(runs()).toEqual(["ran"]);
  }, 180_000);
});
