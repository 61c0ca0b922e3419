import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { openStore } from "../../src/core/store/index.ts";
import { PROJECT_ROOT, spawnAgentd, stopChild } from "../support/binary.ts";
import { openBrowser, type BrowserSession } from "../support/browser.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { GiveUp, isProcessAlive, waitFor } from "../support/waitFor.ts";

// The status page in Debian's Chromium against the compiled ./agentd (supervisor + worker) on loopback.

interface Ready {
  pid: number;
  supervisor_pid: number;
  url: string;
}

const ARTIFACTS = join(PROJECT_ROOT, "tests", "e2e", "artifacts");
const TITLE = `disk full on /var <script>alert("x")</script>`;

let dataDir: string;
/** The token the person at the browser signs in with (started as root, decisions need it). */
const personToken = () => readFileSync(join(dataDir, "token"), "utf8").trim();
let daemon: Subprocess<"ignore", "pipe", "pipe">;
let ready: Ready;
let browser: BrowserSession;
let noScript: BrowserSession | undefined;
let output = "";

function readReady(): Ready | undefined {
  try {
    return JSON.parse(readFileSync(join(dataDir, "ready.json"), "utf8")) as Ready;
  } catch {
    return undefined;
  }
}

async function incidentState(id: number): Promise<string> {
  const response = await fetch(`${ready.url}/status/incidents/${id}?format=json`);
  return ((await response.json()) as { state: string }).state;
}

beforeAll(async () => {
  dataDir = makeTempDir("agentd-status-e2e-");
  // Incidents the watchdog would have written, in the daemon's own store, before it starts.
  const db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
  const insert = db.prepare(
    "INSERT INTO incidents (dedup_key, title, category, severity, state, first_seen, last_seen, count, details) VALUES (?, ?, 'daemon', 'error', 'open', ?, ?, ?, '{}')",
  );
  insert.run("e2e-ack", TITLE, Date.now() - 60_000, Date.now() - 5_000, 3);
  insert.run("e2e-noscript", "upstream 502 storm", Date.now() - 30_000, Date.now() - 2_000, 9);
  db.close();
  daemon = await spawnAgentd(["serve", "--port", "0", "--data-dir", dataDir], { cwd: dataDir, env: { HOME: dataDir } });
  void (async () => {
    for await (const chunk of daemon.stdout) output += new TextDecoder().decode(chunk);
  })();
  void (async () => {
    for await (const chunk of daemon.stderr) output += new TextDecoder().decode(chunk);
  })();
  ready = await waitFor(
    "ready.json",
    () => {
      if (daemon.exitCode !== null) throw new GiveUp(`agentd serve exited with ${daemon.exitCode}: ${output}`);
      return readReady();
    },
    { timeoutMs: 60_000 },
  );
  browser = await openBrowser({ signedIn: { url: ready.url, token: personToken() } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await noScript?.close();
  if (daemon) await stopChild(daemon);
  removeTempDirs();
}, 60_000);

describe("status page in a browser", () => {
  test("loads with no console errors and requests nothing from another origin; values are shown as text", async () => {
    const { page, errors, requests } = browser;
    await page.goto(`${ready.url}/status`);
    await page.waitForSelector("#section-incidents");
    // At least one fragment poll has come back and been swapped in.
    await waitFor("a fragment poll", () => requests.some((url) => url.includes("/status/fragments/")), { timeoutMs: 30_000 });
    await page.waitForFunction("typeof window.htmx === 'object'");
    expect(await page.locator("#incident-1 td.text").textContent()).toBe(TITLE);
    expect(await page.locator("script").count()).toBe(2);
    expect(await page.locator("#connection-lost").isHidden()).toBe(true);
    const origin = new URL(ready.url).origin;
    expect(requests.filter((url) => new URL(url).origin !== origin)).toEqual([]);
    expect(errors).toEqual([]);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, "status-page.png"), fullPage: true });
  }, 90_000);

  test("an incident is acknowledged from the page", async () => {
    const { page } = browser;
    await page.locator("#incident-1").getByRole("button", { name: "Acknowledge" }).click();
    await page.locator("#incident-1 .pill", { hasText: "acknowledged" }).waitFor({ timeout: 30_000 });
    expect(await page.locator("#incident-1").getByRole("button", { name: "Acknowledge" }).count()).toBe(0);
    expect(await incidentState(1)).toBe("acknowledged");
    expect(browser.errors).toEqual([]);
  }, 60_000);

  test("is usable 360 px wide: nothing but the tables' own scroll areas overflows", async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 360, height: 780 });
    await page.reload();
    await page.waitForSelector("#section-hops");
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(360);
    await page.screenshot({ path: join(ARTIFACTS, "status-page-360.png"), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 60_000);

  test("without JavaScript the page is a static snapshot whose buttons still work as forms", async () => {
    noScript = await openBrowser({ javaScriptEnabled: false, signedIn: { url: ready.url, token: personToken() } });
    const { page, requests } = noScript;
    await page.goto(`${ready.url}/status`);
    expect(await page.locator("#incident-2 td.text").textContent()).toBe("upstream 502 storm");
    await page.locator("#incident-2").getByRole("button", { name: "Resolve" }).click();
    await page.waitForURL(`${ready.url}/status`);
    expect(await incidentState(2)).toBe("resolved");
    expect(requests.some((url) => url.includes("/status/fragments/"))).toBe(false);
    await noScript.close();
    noScript = undefined;
  }, 60_000);

  test("a fragment refreshes after the worker is killed and restarted; the banner clears on the first good poll", async () => {
    const { page } = browser;
    const pidCell = page.locator('[data-field="worker-pid"]');
    expect(await pidCell.textContent()).toBe(String(ready.pid));
    // The supervisor is held until the page has seen a failed poll: a restart quicker than one poll
    // interval would otherwise go unnoticed, and the page's way back from "offline" untested.
    process.kill(ready.supervisor_pid, "SIGSTOP");
    try {
      process.kill(ready.pid, "SIGKILL");
      await page.locator("#connection-lost").waitFor({ state: "visible", timeout: 30_000 });
      // The last-known data stays, greyed: the old pid until the new worker answers.
      expect(await page.locator("body.offline").count()).toBe(1);
      expect(await pidCell.textContent()).toBe(String(ready.pid));
    } finally {
      process.kill(ready.supervisor_pid, "SIGCONT");
    }
    const restarted = await waitFor(
      "a new worker in ready.json",
      () => {
        const next = readReady();
        return next && next.pid !== ready.pid && isProcessAlive(next.pid) ? next : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(restarted.url).toBe(ready.url);
    await page.locator('[data-field="worker-pid"]', { hasText: new RegExp(`^${restarted.pid}$`) }).waitFor({ timeout: 60_000 });
    expect(await page.locator("#connection-lost").isHidden()).toBe(true);
    ready = restarted;
  }, 120_000);

  test('"connection lost" shows when the daemon is stopped', async () => {
    const { page } = browser;
    await stopChild(daemon);
    await page.locator("#connection-lost").waitFor({ state: "visible", timeout: 30_000 });
    expect(await page.locator("body.offline main").isVisible()).toBe(true);
    await page.screenshot({ path: join(ARTIFACTS, "status-page-offline.png") });
  }, 60_000);
});
