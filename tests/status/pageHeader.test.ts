import { afterEach, describe, expect, test } from "bun:test";
import { hostname } from "node:os";
import { buildHealthDocument } from "../../src/core/health/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import { createApp } from "../../src/http/app.ts";
import { STATUS_JS } from "../../src/status/statusScript.ts";
import { STATUS_CSS } from "../../src/status/statusStyles.ts";
import { statusPageMounts } from "../../src/status/statusMounts.ts";
import { createStatusSource } from "../../src/status/statusSource.ts";
import { verdictTitle } from "../../src/status/statusVerdict.tsx";
import { IncidentStore } from "../../src/watchdog/index.ts";
import { appDeps } from "../http/appHarness.ts";

const stores: Database[] = [];
afterEach(() => {
  for (const db of stores.splice(0)) db.close();
});

function app() {
  const db = openStore({ path: ":memory:", migrations: baseMigrations });
  stores.push(db);
  const source = createStatusSource({
    incidents: new IncidentStore(db),
    health: async () => buildHealthDocument({ version: "1", checks: [], notes: [], uptimeS: 1, memoryMb: 1, requestsTotal: 0 }),
    worker: () => ({ pid: 1, supervisor_pid: null, version: "1", uptime_s: 1, restarts: 0, memory_mb: 1 }),
  });
  return createApp(appDeps({ mounts: statusPageMounts(source, {}).mounts })).app;
}

const escaped = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

describe("which host a tab is about", () => {
  test("the verdict title names the host after the verdict; pass says pass", () => {
    expect(verdictTitle({ status: "fail", reason: "critical check db failing", reasons: [] }, "web-1")).toBe(
      "FAIL · web-1 · critical check db failing",
    );
    expect(verdictTitle({ status: "pass", reason: "all clear", reasons: [] }, "web-1")).toBe("pass · web-1 · agentd");
  });

  test("every page has the hostname in its header and its title", async () => {
    const host = escaped(hostname());
    for (const path of ["/status", "/status/incidents", "/status/sessions"]) {
      const html = await (await app().request(path, { headers: { accept: "text/html" } })).text();
      expect(html).toContain(`<body data-host="${host}">`);
      expect(html).toContain(`<span class="host" data-field="host">${host}</span>`);
      expect(html).toMatch(new RegExp(`<title>[^<]* · ${host.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} · [^<]*</title>`));
    }
  });

  test("GET / sends a browser, and curl -L, to the page instead of a JSON 404", async () => {
    const response = await app().request("/", { headers: { accept: "text/html" } });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/status");
    expect((await app().request("/nothing-here")).status).toBe(404);
  });
});

describe("offline", () => {
  test("the last-known data is greyed, not hidden, and the script puts OFFLINE and the last verdict in the title", () => {
    expect(STATUS_CSS).not.toMatch(/body\.offline main\{[^}]*display:none/);
    expect(STATUS_CSS).toMatch(/body\.offline main\{[^}]*grayscale/);
    expect(STATUS_JS).toContain('"OFFLINE · " + host');
    expect(STATUS_JS).toContain('" · last known " + last.toUpperCase()');
  });
});
