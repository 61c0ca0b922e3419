import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { ActionRequestStore, IncidentStore } from "../../src/watchdog/index.ts";
import { ensureBinary, spawnAgentd, stopChild } from "../support/binary.ts";
import { daemonToken, rememberDaemonToken } from "../support/daemonTokens.ts";
import { openBrowser, type BrowserSession } from "../support/browser.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { GiveUp, waitFor } from "../support/waitFor.ts";
import { api, parseSseEvents } from "./support/daemonProcess.ts";
import { REFUSED_PORT } from "../support/refusedPort.ts";

// The host's verdict, the one approval queue, the session page and a page that recovers, in
// Debian's Chromium against the compiled ./agentd (supervisor + worker) with a scripted model.

const GATE = "agentd-e2e-verdict-gate";
/** The page polls every 3 s and gives up on a poll after 2.5 s (statusCard.tsx). */
const POLL_MS = 3000;
const SCREENSHOT = "/tmp/agentd-status-verdict.png";

interface Ready {
  pid: number;
  supervisor_pid: number;
  url: string;
}

let upstream: ScriptedUpstream;
let dataDir: string;
let configPath: string;
let port: number;
let daemon: Subprocess<"ignore", "pipe", "pipe"> | undefined;
let ready: Ready;
let browser: BrowserSession;
let sessionId: string;
let incidentId: number;

/** A port nothing listens on: bound once by this process, then released. */
function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const found = probe.port;
  probe.stop(true);
  return found;
}

async function startAgentd(): Promise<Ready> {
  rmSync(join(dataDir, "ready.json"), { force: true });
  const child = await spawnAgentd(["serve", "--port", String(port), "--data-dir", dataDir, "--config", configPath], {
    env: { HOME: dataDir },
  });
  daemon = child;
  let output = "";
  void (async () => {
    for await (const chunk of child.stderr) output += new TextDecoder().decode(chunk);
  })();
  void (async () => {
    for await (const _ of child.stdout);
  })();
  return waitFor(
    "ready.json",
    () => {
      if (child.exitCode !== null) throw new GiveUp(`agentd serve exited with ${child.exitCode}: ${output}`);
      try {
        return JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as Ready;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000 },
  );
}

beforeAll(async () => {
  await ensureBinary();
  upstream = startScriptedUpstream();
  dataDir = makeTempDir("agentd-verdict-e2e-");
  configPath = join(dataDir, "agentd.jsonc");
  port = freePort();
  writeFileSync(
    configPath,
    JSON.stringify({
      providers: [{ name: "scripted", base_url: upstream.url }],
      agent: { model: "gpt-test" },
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
      watchdog: {
        checks: [
          // Nothing listens there: the check fails at its first run, and it is critical.
          { type: "tcp", name: "db", host: "127.0.0.1", port: REFUSED_PORT, interval_s: 0.5, failure_threshold: 1, severity: "critical" },
        ],
      },
    }),
  );
  ready = await startAgentd();
  rememberDaemonToken(ready.url, dataDir);
  browser = await openBrowser();
  // The person at this browser has signed in (started as root, decisions need the token).
  await browser.page.context().addCookies([{ name: "agentd_token", value: daemonToken(ready.url) ?? "", url: ready.url }]);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (daemon) await stopChild(daemon);
  await upstream?.close();
  removeTempDirs();
}, 60_000);

describe("the host's verdict", () => {
  test("a failing critical check: fail banner first, with its reason, in the tab title and /badge.svg", async () => {
    const { page, errors } = browser;
    await page.goto(`${ready.url}/status`);
    await page.locator("#section-verdict[data-status=fail]").waitFor({ timeout: 30_000 });
    // The failing critical check opened a critical incident too: both are fail reasons, shown first.
    const verdict = page.locator("#section-verdict");
    expect(await verdict.locator("[data-field=verdict-reason]").textContent()).toMatch(
      /^critical (incident open: Check db failing|check failing: db)/,
    );
    expect(await verdict.textContent()).toContain("critical check failing: db");
    expect(await page.title()).toMatch(/^FAIL · [^·]+ · critical /);
    expect(await page.evaluate<string>("document.querySelector('main').firstElementChild.id")).toBe("section-verdict");
    const badge = await (await fetch(`${ready.url}/badge.svg`)).text();
    expect(badge).toContain("agentd: fail");
    expect(await (await fetch(`${ready.url}/badge/check/db.svg`)).text()).toContain("db: fail");
    const health = (await (await fetch(`${ready.url}/health`)).json()) as { status: string };
    expect(health.status).toBe("warn");
    expect(errors).toEqual([]);
  }, 90_000);
});

describe("one approval queue, pinned under the verdict", () => {
  test("an agent tool call and a watchdog command, each with what, why, who and a link; both decided from the page", async () => {
    const command = `echo hello-transcript # ${GATE}`;
    upstream.enqueue(
      { kind: "text", toolCalls: [{ id: "c1", name: "exec_command", arguments: JSON.stringify({ cmd: command }) }] },
      { kind: "text", text: "ran it" },
    );
    sessionId = (await api<{ id: string }>(ready.url, "/api/sessions", { body: {}, expect: 201 })).id;
    const stream = await fetch(`${ready.url}/api/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "say hello for the transcript" }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(parseSseEvents(await stream.text()).at(-1)!.type).toBe("approval_required");

    // A run_command the watchdog asks a person for, in the daemon's own store.
    const db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
    try {
      const incidents = new IncidentStore(db);
      const incident = incidents.open({
        fingerprint: "e2e-verdict",
        pattern: "p",
        title: "cache full",
        category: "daemon",
        severity: "error",
        now: Date.now(),
      });
      incidentId = incident.id;
      new ActionRequestStore(db, incidents).create({
        incidentId,
        command: "true",
        tier: 1,
        reason: "rule cache",
        now: Date.now(),
        expiresAt: Date.now() + 600_000,
      });
    } finally {
      db.close();
    }
    const listed = await api<{ approvals: Array<{ kind: string }> }>(ready.url, "/api/approvals");
    expect(listed.approvals.map((a) => a.kind).sort()).toEqual(["agent", "watchdog"]);
    // `agentd approve` lists the same queue: both kinds, what runs and why.
    const cli = await spawnAgentd(["approve", "--url", ready.url], { env: { HOME: dataDir } });
    const [listing, code] = await Promise.all([new Response(cli.stdout).text(), cli.exited]);
    expect(code).toBe(0);
    expect(listing).toContain(`command: ${command}`);
    expect(listing).toContain("task: say hello for the transcript");
    expect(listing).toMatch(/wd_\d+ +exec +run_command +\(watchdog, incident \d+\)/);
    expect(listing).toContain("incident: cache full");

    const { page, errors } = browser;
    await page.reload();
    const queue = page.locator("#section-approvals");
    await queue.locator("li[data-kind=watchdog]").waitFor({ timeout: 30_000 });
    expect(await page.evaluate<string>("document.querySelector('main').children[1].id")).toBe("section-approvals");
    const agentItem = queue.locator("li[data-kind=agent]");
    const watchdogItem = queue.locator("li[data-kind=watchdog]");
    expect(await agentItem.locator("[data-raw-command]").textContent()).toBe(command);
    expect(await agentItem.locator("[data-field=why]").textContent()).toContain("say hello for the transcript");
    expect(await agentItem.locator("[data-field=requested-by]").textContent()).toBe("agent session");
    expect(await agentItem.locator(`a[href="/status/sessions/${sessionId}"]`).count()).toBe(1);
    expect(await watchdogItem.locator("[data-raw-command]").textContent()).toBe("true");
    expect(await watchdogItem.locator("[data-field=why]").textContent()).toContain("cache full");
    expect(await watchdogItem.locator("[data-field=requested-by]").textContent()).toBe("watchdog");
    expect(await watchdogItem.locator(`a[href="/status/incidents/${incidentId}"]`).count()).toBe(1);
    expect(await page.locator("#section-verdict ul.why").textContent()).toContain("2 approvals waiting");
    await page.screenshot({ path: SCREENSHOT, fullPage: false });

    await agentItem.getByRole("button", { name: "Allow once" }).click();
    await agentItem.getByText("Allowed once").waitFor({ timeout: 30_000 });
    await watchdogItem.getByRole("button", { name: "Allow" }).click();
    await watchdogItem.locator(".action-result").waitFor({ timeout: 30_000 });
    const incident = await api<{ incident: { action_request: { status: string; decided_by: string } } }>(
      ready.url,
      `/api/incidents/${incidentId}`,
    );
    expect(incident.incident.action_request.decided_by).toBe("page");
    expect(incident.incident.action_request.status).not.toBe("pending");
    await waitFor("the turn to finish", async () => {
      const view = await api<{ session: { state: string } }>(ready.url, `/api/sessions/${sessionId}`);
      return view.session.state === "idle" ? view : undefined;
    });
    await queue.getByText("Nothing is waiting for approval.").waitFor({ timeout: 30_000 });
    expect(errors).toEqual([]);
  }, 180_000);
});

describe("the session page", () => {
  test("the transcript: messages, the tool call with exit code, duration and output tail, the approval and who decided; live", async () => {
    const { page, errors } = browser;
    await page.goto(`${ready.url}/status/sessions/${sessionId}`);
    const transcript = page.locator("#section-transcript");
    await transcript.getByText("say hello for the transcript", { exact: true }).waitFor({ timeout: 30_000 });
    const call = transcript.locator("li.tool-call");
    expect(await call.locator("strong").textContent()).toBe("exec_command");
    expect(await call.locator("pre.output").textContent()).toContain("hello-transcript");
    expect(await call.locator("[data-field=approval]").textContent()).toContain("allow_once by page");
    expect(await call.textContent()).toMatch(/ in \d/);
    expect(await transcript.getByText("ran it", { exact: true }).count()).toBe(1);

    // A new turn shows up on the open page, without a reload.
    upstream.enqueue({ kind: "text", text: "second answer on the live page" });
    const stream = await fetch(`${ready.url}/api/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "and once more" }),
      signal: AbortSignal.timeout(60_000),
    });
    await stream.text();
    await transcript.getByText("second answer on the live page", { exact: true }).waitFor({ timeout: 3 * POLL_MS + 5000 });

    // Without JavaScript it is the same transcript, as a snapshot.
    const html = await (await fetch(`${ready.url}/status/sessions/${sessionId}`, { headers: { accept: "text/html" } })).text();
    expect(html).toContain("second answer on the live page");
    expect(html).toContain("hello-transcript");
    expect(errors).toEqual([]);
  }, 120_000);
});

describe("a page that recovers", () => {
  test("daemon stopped: banner; started again: banner gone within two polls, data back, time refreshed", async () => {
    const { page } = browser;
    await page.goto(`${ready.url}/status`);
    await page.locator("#section-verdict").waitFor();
    const banner = page.locator("#connection-lost");
    expect(await banner.isHidden()).toBe(true);
    await stopChild(daemon!);
    daemon = undefined;
    await banner.waitFor({ state: "visible", timeout: 2 * POLL_MS + 5000 });
    ready = await startAgentd();
    const back = Date.now();
    await banner.waitFor({ state: "hidden", timeout: 2 * POLL_MS + 1000 });
    expect(Date.now() - back).toBeLessThanOrEqual(2 * POLL_MS + 1000);
    expect(await page.locator("#section-verdict").isVisible()).toBe(true);
    const before = await page.locator("header.top .generated").textContent();
    // The tab title follows the verdict fragment, not just the first load.
    await page.evaluate("document.title = 'stale'");
    await waitFor("the title to refresh", async () => (/^FAIL · [^·]+ · critical /.test(await page.title()) ? true : undefined), {
      timeoutMs: 2 * POLL_MS + 2000,
    });
    // The page's CSP forbids eval: Playwright's waitForFunction cannot run here, so poll the text.
    const generated = page.locator("header.top .generated");
    await waitFor("the header time to refresh", async () => ((await generated.textContent()) !== before ? true : undefined), {
      timeoutMs: 2 * POLL_MS + 2000,
    });
  }, 180_000);

  test("a hung worker (SIGSTOP): a poll times out and shows the banner; SIGCONT clears it", async () => {
    const { page } = browser;
    const banner = page.locator("#connection-lost");
    await banner.waitFor({ state: "hidden", timeout: 10_000 });
    const worker = ready.pid;
    process.kill(worker, "SIGSTOP");
    try {
      await banner.waitFor({ state: "visible", timeout: 2 * POLL_MS + 5000 });
    } finally {
      process.kill(worker, "SIGCONT");
    }
    await banner.waitFor({ state: "hidden", timeout: 3 * POLL_MS + 5000 });
  }, 120_000);
});
