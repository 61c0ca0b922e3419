import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { ensureBinary, PROJECT_ROOT, spawnAgentd, stopChild } from "../support/binary.ts";
import { daemonToken, rememberDaemonToken } from "../support/daemonTokens.ts";
import { openBrowser, type BrowserSession } from "../support/browser.ts";
import { startScriptedUpstream, type ScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { GiveUp, waitFor } from "../support/waitFor.ts";
import { api, parseSseEvents } from "./support/daemonProcess.ts";
import { REFUSED_PORT } from "../support/refusedPort.ts";

// The page an on-call engineer acts from, in Debian's Chromium against the compiled ./agentd: the
// host in header and title, failing checks first with their recent results and silences, a
// transcript that calls a failed call failed (colours stripped) and asks for its decision, an
// incident page in words, OFFLINE with the last data greyed; at 1280 and 390 px.

const GATE = "agentd-e2e-oncall-gate";
const ARTIFACTS = join(PROJECT_ROOT, "tests", "e2e", "artifacts");
const ESC = "\u001b";

interface Ready {
  pid: number;
  url: string;
}

let upstream: ScriptedUpstream;
let dataDir: string;
let daemon: Subprocess<"ignore", "pipe", "pipe"> | undefined;
let ready: Ready;
let browser: BrowserSession;
let phone: BrowserSession;
let listener: { port: number; stop(closeActive?: boolean): void };
let sessionId: string;

function freePort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const found = probe.port;
  probe.stop(true);
  return found;
}

const shot = (name: string) => join(ARTIFACTS, `oncall-${name}.png`);

beforeAll(async () => {
  await ensureBinary();
  mkdirSync(ARTIFACTS, { recursive: true });
  upstream = startScriptedUpstream();
  // The "web" check connects here and passes; "db" and "cache" find nobody and fail.
  listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  dataDir = makeTempDir("agentd-oncall-e2e-");
  const configPath = join(dataDir, "agentd.jsonc");
  const tcp = (name: string, port: number, severity = "error") => ({
    type: "tcp",
    name,
    host: "127.0.0.1",
    port,
    interval_s: 0.5,
    failure_threshold: 1,
    severity,
  });
  writeFileSync(
    configPath,
    JSON.stringify({
      providers: [{ name: "scripted", base_url: upstream.url }],
      agent: { model: "gpt-test" },
      approvals: { rules: [{ match: `*${GATE}*`, action: "ask" }] },
      watchdog: { checks: [tcp("web", listener.port), tcp("db", REFUSED_PORT, "critical"), tcp("cache", REFUSED_PORT)] },
    }),
  );
  const child = await spawnAgentd(["serve", "--port", String(freePort()), "--data-dir", dataDir, "--config", configPath], {
    env: { HOME: dataDir },
  });
  daemon = child;
  void (async () => {
    for await (const _ of child.stdout);
  })();
  void (async () => {
    for await (const _ of child.stderr);
  })();
  ready = await waitFor(
    "ready.json",
    () => {
      if (child.exitCode !== null) throw new GiveUp(`agentd serve exited with ${child.exitCode}`);
      try {
        return JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as Ready;
      } catch {
        return undefined;
      }
    },
    { timeoutMs: 60_000 },
  );
  rememberDaemonToken(ready.url, dataDir);
  const signedIn = { url: ready.url, token: daemonToken(ready.url) };
  browser = await openBrowser({ signedIn });
  phone = await openBrowser({ signedIn, viewport: { width: 390, height: 844 } });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await phone?.close();
  if (daemon) await stopChild(daemon);
  listener?.stop(true);
  await upstream?.close();
  removeTempDirs();
}, 60_000);

/** Each check's state as /status reports it; reading it is also what notes a result in the page's history. */
async function checkStates(): Promise<Record<string, string>> {
  const status = await api<{ watchdog: { rows: Array<{ name: string; state: string }> } }>(ready.url, "/status?format=json");
  return Object.fromEntries(status.watchdog.rows.map((row) => [row.name, row.state]));
}

/** The page is no wider than the screen: nothing needs a sideways scroll of the whole page. */
async function fitsWidth(session: BrowserSession): Promise<void> {
  const width = await session.page.evaluate<number>("document.documentElement.scrollWidth");
  expect(width).toBeLessThanOrEqual(390);
}

describe("the status page", () => {
  test("GET / opens it; the host is in the header and the title; failing checks first, silenced one marked with its end", async () => {
    await api(ready.url, "/api/incidents/silences", { body: { target: "cache", duration_s: 7200, reason: "migration" }, expect: 201 });
    // Both failing checks have failed and the passing one passed: the history has a result for each.
    await waitFor("the checks' first results", async () => {
      const states = await checkStates();
      return states.db === "fail" && states.cache === "fail" && states.web === "pass" ? true : undefined;
    });
    // "web" goes down and comes back: its strip shows pass, fail, pass, each with its time.
    const webPort = listener.port;
    listener.stop(true);
    await waitFor("web to fail", async () => ((await checkStates()).web === "fail" ? true : undefined));
    listener = Bun.listen({ hostname: "127.0.0.1", port: webPort, socket: { data() {} } });
    await waitFor("web to pass again", async () => ((await checkStates()).web === "pass" ? true : undefined));
    const { page, errors } = browser;
    await page.goto(`${ready.url}/`);
    expect(new URL(page.url()).pathname).toBe("/status");
    await page.locator("#section-verdict[data-status=fail]").waitFor({ timeout: 30_000 });
    expect(await page.locator("header.top [data-field=host]").textContent()).toBe(hostname());
    expect(await page.title()).toStartWith(`FAIL · ${hostname()} · critical `);

    const rows = page.locator("#section-watchdog tbody tr");
    expect(await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-check")))).toEqual(["db", "cache", "web"]);
    const cache = page.locator('#section-watchdog tr[data-check="cache"]');
    expect(await cache.locator("[data-field=silenced]").textContent()).toMatch(
      /^silenced until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(in 1h59m\)$/,
    );
    expect(await page.locator('#section-watchdog tr[data-check="db"] [data-field=silenced]').count()).toBe(0);
    const cell = page.locator('#section-watchdog tr[data-check="db"] [data-field=history] .cell').last();
    expect(await cell.getAttribute("data-state")).toBe("fail");
    expect(await cell.getAttribute("title")).toMatch(/^fail at \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
    const web = page.locator('#section-watchdog tr[data-check="web"] [data-field=history] .cell');
    expect(await web.evaluateAll((cells) => cells.map((cell) => cell.getAttribute("data-state")))).toEqual(["pass", "fail", "pass"]);
    expect(await page.locator("#section-watchdog h2 .summary").textContent()).toBe("3 checks, 2 failing, 1 silenced");
    // curl's view (agentd status) says it too, failing first.
    const text = await (await fetch(`${ready.url}/status`, { headers: { accept: "*/*" } })).text();
    const checkLines = text.split("\n").filter((line) => /^ {2}(db|cache|web) +tcp /.test(line));
    expect(checkLines.map((line) => line.trim().split(/\s+/)[0])).toEqual(["db", "cache", "web"]);
    expect(checkLines[1]).toMatch(/silenced until \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ; /);
    await page.screenshot({ path: shot("status-1280"), fullPage: true });

    await phone.page.goto(`${ready.url}/status`);
    await phone.page.locator("#section-watchdog [data-field=history]").first().waitFor({ timeout: 30_000 });
    await fitsWidth(phone);
    await phone.page.screenshot({ path: shot("status-390"), fullPage: true });
    expect(errors).toEqual([]);
  }, 120_000);
});

describe("the transcript page", () => {
  test("a call that exited 1 is failed with its output in plain text; a waiting call has decide buttons that work", async () => {
    upstream.enqueue(
      {
        kind: "text",
        toolCalls: [
          { id: "c1", name: "exec_command", arguments: JSON.stringify({ cmd: "printf '\\033[1;31mred-error\\033[0m\\n'; exit 1" }) },
        ],
      },
      { kind: "text", toolCalls: [{ id: "c2", name: "exec_command", arguments: JSON.stringify({ cmd: `echo decided-here # ${GATE}` }) }] },
      { kind: "text", text: "all done" },
    );
    sessionId = (await api<{ id: string }>(ready.url, "/api/sessions", { body: {}, expect: 201 })).id;
    const stream = await fetch(`${ready.url}/api/sessions/${sessionId}/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ content: "print the error in red" }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(parseSseEvents(await stream.text()).at(-1)!.type).toBe("approval_required");

    const { page, errors } = browser;
    await page.goto(`${ready.url}/status/sessions/${sessionId}`);
    const transcript = page.locator("#section-transcript");
    const failed = transcript.locator("li.tool-call").first();
    await failed.waitFor({ timeout: 30_000 });
    expect(await failed.getAttribute("data-result")).toBe("failed");
    expect(await failed.locator(".pill").first().textContent()).toBe("failed");
    expect(await failed.locator("[data-field=exit-code]").textContent()).toBe("exit 1");
    const output = await failed.locator("pre.output").textContent();
    expect(output).toBe("red-error");
    expect(await transcript.textContent()).not.toContain(ESC);

    const waiting = transcript.locator("[data-field=waiting]");
    await waiting.waitFor({ timeout: 30_000 });
    expect(await waiting.locator("[data-raw-command]").textContent()).toBe(`echo decided-here # ${GATE}`);
    await page.screenshot({ path: shot("transcript-1280"), fullPage: true });
    await phone.page.goto(`${ready.url}/status/sessions/${sessionId}`);
    await phone.page.locator("#section-transcript [data-field=waiting]").waitFor({ timeout: 30_000 });
    await fitsWidth(phone);
    await phone.page.screenshot({ path: shot("transcript-390"), fullPage: true });

    // "Allowed once" shows in the card only until the next poll replaces it with the decided call:
    // what the click did is asserted below, not a state the page may already have left.
    await waiting.getByRole("button", { name: "Allow once" }).click();
    await waitFor("the turn to finish", async () => {
      const view = await api<{ session: { state: string } }>(ready.url, `/api/sessions/${sessionId}`);
      return view.session.state === "idle" ? true : undefined;
    });
    // The next poll shows the decided call, and nothing waits any more.
    await transcript.getByText("all done", { exact: true }).waitFor({ timeout: 30_000 });
    expect(await transcript.locator("[data-field=waiting]").count()).toBe(0);
    expect(await transcript.locator("li.tool-call").nth(1).locator("pre.output").textContent()).toContain("decided-here");
    expect(errors).toEqual([]);
  }, 180_000);
});

describe("the incident page", () => {
  test("the check's output, who acknowledged and when, the timeline in words; no JSON blob, no epoch ms", async () => {
    const list = await api<{ incidents: Array<{ id: number; title: string }> }>(ready.url, "/api/incidents?state=open");
    const db = list.incidents.find((incident) => incident.title.includes("Check db failing"));
    expect(db).toBeDefined();
    const { page, errors } = browser;
    await page.goto(`${ready.url}/status/incidents/${db!.id}`);
    await page.getByRole("button", { name: "Acknowledge" }).click();
    await page.waitForURL(`${ready.url}/status/incidents/${db!.id}`);
    expect(await page.locator("[data-field=state]").textContent()).toMatch(
      /^acknowledged by page, \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(\d+s ago\)$/,
    );
    const output = await page.locator("[data-field=output]").textContent();
    expect(output).toContain("ECONNREFUSED");
    expect(await page.locator("[data-field=check-now]").textContent()).toContain("check db now: fail");
    const timeline = await page.locator("ol.timeline").textContent();
    expect(timeline).toContain("the watchdog saw: Check db failing");
    expect(timeline).toContain("acknowledged by page");
    const main = (await page.locator("main").textContent()) ?? "";
    expect(main).not.toMatch(/\b1\d{12}\b/);
    expect(main).not.toContain('"component"');
    await page.screenshot({ path: shot("incident-1280"), fullPage: true });
    await phone.page.goto(`${ready.url}/status/incidents/${db!.id}`);
    await fitsWidth(phone);
    await phone.page.screenshot({ path: shot("incident-390"), fullPage: true });
    expect(errors).toEqual([]);
  }, 120_000);
});

describe("offline", () => {
  test("daemon stopped: OFFLINE and the last verdict in the title, the last data still there, greyed", async () => {
    const { page } = browser;
    await page.goto(`${ready.url}/status`);
    await page.locator("#section-verdict[data-status=fail]").waitFor({ timeout: 30_000 });
    await stopChild(daemon!);
    daemon = undefined;
    await page.locator("#connection-lost").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.title()).toBe(`OFFLINE · ${hostname()} · last known FAIL · agentd`);
    expect(await page.locator("main").isVisible()).toBe(true);
    expect(await page.locator('#section-watchdog tr[data-check="db"]').isVisible()).toBe(true);
    expect(await page.evaluate<string>("getComputedStyle(document.querySelector('main')).filter")).toContain("grayscale");
    await page.screenshot({ path: shot("offline-1280"), fullPage: false });
  }, 60_000);
});
