import { afterEach, describe, expect, test } from "bun:test";
import { Hono } from "hono";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { buildHealthDocument, type HealthCheck } from "../../src/core/health/index.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import { IncidentStore, type Incident } from "../../src/watchdog/index.ts";
import { createErrorHandler } from "../../src/http/errorResponse.ts";
import { createLogger } from "../../src/core/log/index.ts";
import { createApp } from "../../src/http/app.ts";
import { bearerAuth, TOKEN_COOKIE } from "../../src/http/bearerAuth.ts";
import { HTMX_PATH } from "../../src/status/htmxAsset.ts";
import { LOGIN_PATHS, loginRoutes, PERSON_COOKIE, safeNext } from "../../src/status/loginRoutes.tsx";
import { PUBLIC_ASSET_PATHS, STATUS_ASSETS } from "../../src/status/statusAssets.ts";
import { statusRoutes } from "../../src/status/statusRoutes.ts";
import { statusPageMounts } from "../../src/status/statusMounts.ts";
import type { SessionRow, StatusSnapshot } from "../../src/status/statusSnapshot.ts";
import { createStatusSource, type StatusSources } from "../../src/status/statusSource.ts";
import { PROJECT_ROOT } from "../support/binary.ts";
import { appDeps } from "../http/appHarness.ts";

const stores: Database[] = [];
afterEach(() => {
  for (const db of stores.splice(0)) db.close();
});

function insertIncidents(db: Database, count: number, state = "open", title = (i: number) => `incident number ${i}`): void {
  const insert = db.prepare(
    "INSERT INTO incidents (dedup_key, title, category, severity, state, first_seen, last_seen, count, details) VALUES (?, ?, 'daemon', 'error', ?, ?, ?, 1, '{}')",
  );
  const base = Date.now() - 1_000_000;
  db.transaction(() => {
    for (let i = 0; i < count; i++) insert.run(`${state}-${i}-${Math.random()}`, title(i), state, base + i, base + i);
  })();
}

function setup(
  extra: Partial<StatusSources> = {},
  checks: HealthCheck[] = [{ key: "store:writable", status: "pass", observedValue: true }],
) {
  const db = openStore({ path: ":memory:", migrations: baseMigrations });
  stores.push(db);
  const incidents = new IncidentStore(db);
  const source = createStatusSource({
    incidents,
    health: async () => buildHealthDocument({ version: "9.9.9", checks, notes: ["a note"], uptimeS: 65, memoryMb: 30, requestsTotal: 1 }),
    worker: () => ({ pid: 1234, supervisor_pid: 1200, version: "9.9.9", uptime_s: 65, restarts: 0, memory_mb: 30 }),
    ...extra,
  });
  const { app } = createApp(appDeps({ mounts: statusPageMounts(source, {}).mounts }));
  const get = (path: string, headers: Record<string, string> = {}) => app.request(path, { headers });
  const post = (path: string, headers: Record<string, string> = {}) =>
    app.request(path, { method: "POST", headers: { host: "localhost", ...headers } });
  return { db, incidents, app, get, post };
}

describe("GET /status for curl and CI", () => {
  test("text: aligned, ≤ 100 columns, newline-terminated, no HTML, no ANSI", async () => {
    const { db, get } = setup({
      ptySessions: () => [
        {
          id: "p1",
          command: `tail -f /var/log/${"very/".repeat(40)}syslog`,
          pid: 77,
          running: true,
          exit_code: null,
          started_at: Date.now(),
          last_output_at: null,
        },
      ],
    });
    insertIncidents(db, 3);
    const response = await get("/status", { accept: "*/*" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    const text = await response.text();
    expect(text.endsWith("\n")).toBe(true);
    for (const line of text.trimEnd().split("\n")) expect([...line].length).toBeLessThanOrEqual(100);
    expect(text).not.toMatch(/<\/?(html|section|table|div|span|p)\b/);
    expect(text).not.toContain("\u001b");
    expect(text).toContain("INCIDENTS  3 open, 0 acknowledged, 0 resolved");
    expect(text).toContain("tail -f /var/log/very/");
    const colored = await (await get("/status?color=1", { accept: "*/*" })).text();
    // Three open error incidents: the host's verdict is warn (agentd's own health still passes).
    expect(colored).toContain("\u001b[33mWARN\u001b[0m");
    expect(colored).toContain("\n  error incident open: incident number 2 (and 2 more)\n");
  });

  test("JSON: the documented shape, every section with configured and rows", async () => {
    const sessions: SessionRow[] = Array.from({ length: 15 }, (_, i) => ({
      id: `s${i}`,
      target: "local",
      model: "m",
      state: "idle",
      started_at: 1,
      last_activity: 2,
    }));
    const { db, get } = setup({
      sessions: (page) => ({ total: sessions.length, rows: sessions.slice(page.offset, page.offset + page.limit) }),
      providers: () => {
        throw new Error("proxy exploded");
      },
    });
    insertIncidents(db, 12, "open");
    insertIncidents(db, 2, "resolved");
    db.run(
      "INSERT INTO incidents (dedup_key, title, category, severity, state, first_seen, last_seen) VALUES ('newest-ack', 'newest', 'daemon', 'error', 'acknowledged', 1, ?)",
      [Date.now()],
    );
    const response = await get("/status", { accept: "application/json" });
    expect(response.headers.get("content-type")).toStartWith("application/json");
    const body = (await response.json()) as StatusSnapshot;
    expect(Object.keys(body).sort()).toEqual([
      "approvals",
      "generated_at",
      "health",
      "hops",
      "host",
      "incidents",
      "providers",
      "pty",
      "schema",
      "sessions",
      "silences",
      "verdict",
      "watchdog",
      "worker",
    ]);
    expect(new Date(body.generated_at).toISOString()).toBe(body.generated_at);
    expect(body.health.status).toBe("pass");
    expect(body.worker).toEqual({ pid: 1234, supervisor_pid: 1200, version: "9.9.9", uptime_s: 65, restarts: 0, memory_mb: 30 });
    for (const name of ["providers", "watchdog", "incidents", "sessions", "approvals", "pty", "hops"] as const) {
      expect(typeof body[name].configured).toBe("boolean");
      expect(Array.isArray(body[name].rows)).toBe(true);
    }
    expect(body.providers).toEqual({ configured: true, error: "Cannot read the providers: proxy exploded", rows: [] });
    expect(body.hops).toEqual({ configured: false, note: "Hops are not available in this agentd.", rows: [] });
    expect(body.incidents.counts).toEqual({ open: 12, acknowledged: 1, resolved: 2 });
    expect(body.incidents.rows).toHaveLength(10);
    // Open and acknowledged together, most recent first.
    expect(body.incidents.rows[0]!.title).toBe("newest");
    const seen = body.incidents.rows.map((row) => row.last_seen);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
    expect(body.incidents.rows[0]).not.toHaveProperty("details");
    expect(body.incidents.rows.every((row) => row.state !== "resolved")).toBe(true);
    expect(body.sessions.total).toBe(15);
    expect(body.sessions.rows).toHaveLength(10);
  });

  test("HTML: a strict CSP, no caching, and every section", async () => {
    const { get } = setup();
    const response = await get("/status", { accept: "text/html" });
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(response.headers.get("content-security-policy")).not.toContain("unsafe");
    expect(response.headers.get("cache-control")).toBe("no-store");
    const html = await response.text();
    expect(html).toContain(`<script src="${HTMX_PATH}" defer=""></script>`);
    expect(html).toContain("Not configured: The agent is not available in this agentd.");
  });

  test("a fragment is one section; an unknown one is a 404 JSON error", async () => {
    const { get } = setup();
    const html = await (await get("/status/fragments/worker")).text();
    expect(html).toStartWith('<section id="section-worker"');
    expect(html).toContain('<dd class="mono" data-field="worker-pid">1234</dd>');
    const missing = await get("/status/fragments/nope");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});

describe("incident pages and buttons", () => {
  test("the list pages by 50, filters by state, and refuses a bad page or state", async () => {
    const { db, get } = setup();
    insertIncidents(db, 120, "open");
    insertIncidents(db, 5, "resolved");
    const page3 = (await (await get("/status/incidents?page=3&state=open", { accept: "application/json" })).json()) as {
      total: number;
      pages: number;
      incidents: unknown[];
    };
    expect(page3).toMatchObject({ total: 120, pages: 3 });
    expect(page3.incidents).toHaveLength(20);
    const html = await (await get("/status/incidents?page=2", { accept: "text/html" })).text();
    expect(html).toContain("page 2 of 3 (125 in all)");
    expect(html).toContain('href="/status/incidents?page=1" rel="prev"');
    expect(html).toContain('href="/status/incidents?page=3" rel="next"');
    const text = await (await get("/status/incidents?state=resolved", { accept: "*/*" })).text();
    expect(text).toStartWith("INCIDENTS  resolved, page 1 of 1, 5 in all\n");
    for (const bad of ["/status/incidents?page=0", "/status/incidents?page=abc", "/status/incidents?state=closed"]) {
      const response = await get(bad);
      expect({ bad, status: response.status }).toEqual({ bad, status: 400 });
      expect(((await response.json()) as { error: { code: string } }).error).toMatchObject({
        code: "invalid_query",
        param: bad.includes("page") ? "page" : "state",
      });
    }
  });

  test("the detail page shows the incident and its timeline; an unknown id is 404", async () => {
    const { db, get, post } = setup();
    insertIncidents(db, 1, "open", () => "disk <b>full</b>");
    await post("/status/incidents/1/ack");
    const html = await (await get("/status/incidents/1", { accept: "text/html" })).text();
    expect(html).toContain("Incident 1: disk &lt;b&gt;full&lt;/b&gt;");
    expect(html).toMatch(/first seen<\/li>/);
    expect(html).toContain("acknowledged by page");
    const json = (await (await get("/status/incidents/1?format=json")).json()) as { state: string; timeline: Array<{ label: string }> };
    expect(json.state).toBe("acknowledged");
    expect(json.timeline.map((entry) => entry.label)).toEqual(["first seen", "acknowledged"]);
    const missing = await get("/status/incidents/999");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("incident_not_found");
  });

  test("Acknowledge from htmx answers the new row; Resolve without JavaScript redirects back", async () => {
    const { db, incidents, post } = setup();
    insertIncidents(db, 1);
    const ack = await post("/status/incidents/1/ack", {
      "hx-request": "true",
      origin: "http://localhost",
      "sec-fetch-site": "same-origin",
    });
    expect(ack.status).toBe(200);
    const row = await ack.text();
    expect(row).toStartWith('<tr id="incident-1">');
    expect(row).toContain("acknowledged");
    expect(row).not.toContain("Acknowledge</button>");
    expect(row).toContain("Resolve</button>");
    expect(incidents.get(1).details.acknowledged_by).toBe("page");
    const resolve = await post("/status/incidents/1/resolve", { referer: "http://localhost/status?x=1" });
    expect(resolve.status).toBe(303);
    expect(resolve.headers.get("location")).toBe("/status?x=1");
    expect(incidents.get(1).state).toBe("resolved");
  });

  test("a cross-site POST is refused and changes nothing", async () => {
    const { db, incidents, post } = setup();
    insertIncidents(db, 1);
    const crossSite: Array<Record<string, string>> = [
      { "sec-fetch-site": "cross-site" },
      { origin: "http://evil.example" },
      { origin: "null" },
    ];
    for (const headers of crossSite) {
      const response = await post("/status/incidents/1/resolve", headers);
      expect(response.status).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("csrf_rejected");
    }
    expect(incidents.get(1).state).toBe("open");
  });
});

describe("assets, badges, sessions", () => {
  test("htmx is served from the binary at a versioned path with a year-long cache", async () => {
    const { get } = setup();
    const response = await get(HTMX_PATH);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(response.headers.get("content-type")).toStartWith("text/javascript");
    expect(await response.text()).toBe(readFileSync(join(PROJECT_ROOT, "node_modules/htmx.org/dist/htmx.min.js"), "utf8"));
    const css = await get(STATUS_ASSETS.stylesheet.path);
    expect(await css.text()).toContain("prefers-color-scheme:dark");
  });

  test("badges show overall health and one check's state; an unknown check is a grey 404 badge", async () => {
    const { get } = setup({}, [
      { key: "store:writable", status: "pass" },
      { key: "provider.main:breaker", status: "fail", output: "open" },
    ]);
    const overall = await get("/badge.svg");
    expect(overall.headers.get("content-type")).toStartWith("image/svg+xml");
    expect(overall.headers.get("cache-control")).toContain("no-cache");
    expect(await overall.text()).toContain(">fail</text>");
    expect(await (await get("/badge/store:writable.svg")).text()).toContain('aria-label="store:writable: pass"');
    expect(await (await get("/badge/provider.main.svg")).text()).toContain('aria-label="provider.main: fail"');
    const unknown = await get("/badge/nope.svg");
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain("#757575");
    for (const inherited of ["constructor", "__proto__", "toString"]) expect((await get(`/badge/${inherited}.svg`)).status).toBe(404);
  });

  test("the sessions page pages through the agent's sessions, or says the agent is absent", async () => {
    const rows: SessionRow[] = Array.from({ length: 60 }, (_, i) => ({
      id: `s${i}`,
      target: "local",
      model: "gpt",
      state: "idle",
      started_at: 1,
      last_activity: 2,
      title: `t${i}`,
    }));
    const withAgent = setup({ sessions: (page) => ({ total: rows.length, rows: rows.slice(page.offset, page.offset + page.limit) }) });
    const json = (await (await withAgent.get("/status/sessions?page=2&format=json")).json()) as { total: number; sessions: SessionRow[] };
    expect(json.total).toBe(60);
    expect(json.sessions.map((s) => s.id)).toEqual(rows.slice(50).map((s) => s.id));
    expect(await (await withAgent.get("/status/sessions", { accept: "*/*" })).text()).toContain("next: /status/sessions?page=2");
    const without = setup();
    expect(await (await without.get("/status/sessions", { accept: "text/html" })).text()).toContain(
      "Not configured: The agent is not available in this agentd.",
    );
  });
});

describe("login on a non-loopback bind", () => {
  const TOKEN = "login-token-0123456789abcdef";
  // The app as the lead wires it: bearerAuth lets /login and the stylesheet through.
  function guarded() {
    const db = openStore({ path: ":memory:", migrations: baseMigrations });
    stores.push(db);
    const source = createStatusSource({
      incidents: new IncidentStore(db),
      health: async () => buildHealthDocument({ version: "1", checks: [], notes: [], uptimeS: 1, memoryMb: 1, requestsTotal: 0 }),
      worker: () => ({ pid: 1, supervisor_pid: null, version: "1", uptime_s: 1, restarts: 0, memory_mb: 1 }),
    });
    const app = new Hono();
    app.onError(createErrorHandler(createLogger("test")));
    app.use(bearerAuth({ token: TOKEN, exempt: ["/livez", ...LOGIN_PATHS, ...PUBLIC_ASSET_PATHS] }));
    app.route("/", statusRoutes(source));
    app.route("/", loginRoutes({ token: TOKEN }));
    return Object.assign(app, { db });
  }
  const form = (fields: Record<string, string>, headers: Record<string, string> = {}) => ({
    method: "POST",
    headers: { host: "agentd.example:7070", "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(fields).toString(),
  });

  test("the form sets an HttpOnly cookie that opens the page; a wrong token does not", async () => {
    const app = guarded();
    expect((await app.request("/status", { headers: { accept: "text/html" } })).status).toBe(401);
    const page = await app.request("/login?next=/status/incidents");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="next" value="/status/incidents"');
    expect((await app.request(STATUS_ASSETS.stylesheet.path)).status).toBe(200);
    const wrong = await app.request("/login", form({ name: "alice", token: "nope", next: "/status" }));
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    const right = await app.request("/login", form({ name: "alice", token: TOKEN, next: "/status/incidents" }));
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe("/status/incidents");
    const cookies = right.headers.getSetCookie();
    expect(cookies[0]).toStartWith(`${TOKEN_COOKIE}=${TOKEN};`);
    for (const cookie of cookies) {
      expect(cookie).toContain("HttpOnly");
      expect(cookie).toContain("SameSite=Strict");
    }
    const status = await app.request("/status", { headers: { accept: "text/html", cookie: `${TOKEN_COOKIE}=${TOKEN}` } });
    expect(status.status).toBe(200);
  });

  test("the name typed at sign-in names whoever acknowledges and resolves from the page; a bad name is refused, saying why", async () => {
    const app = guarded();
    app.db.run(
      "INSERT INTO incidents (dedup_key, title, category, severity, state, first_seen, last_seen) VALUES ('k1', 'disk full', 'daemon', 'error', 'open', 1, 2)",
    );
    const page = await (await app.request("/login")).text();
    expect(page).toContain('<input id="name" name="name" type="text"');
    expect(page).toContain('maxlength="64"');
    const refusals: Array<[string, string]> = [
      ["", "a name is needed"],
      ["   ", "a name is needed"],
      ["x".repeat(65), "a name is at most 64 characters"],
      ["bell\u0007", "a name may hold printable characters only"],
      ["zero\u200bwidth", "a name may hold printable characters only"],
    ];
    for (const [name, why] of refusals) {
      const refused = await app.request("/login", form({ name, token: TOKEN }));
      expect(refused.status).toBe(400);
      expect(refused.headers.get("set-cookie")).toBeNull();
      expect(await refused.text()).toContain(`Cannot sign in with that name: ${why}`);
    }
    const signedIn = await app.request("/login", form({ name: "  Alice <Smith>  ", token: TOKEN }));
    expect(signedIn.status).toBe(303);
    const jar = signedIn.headers
      .getSetCookie()
      .map((cookie) => cookie.split(";")[0])
      .join("; ");
    expect(jar).toContain(`${PERSON_COOKIE}=`);
    const asPerson = (path: string, cookie = jar) =>
      app.request(path, {
        method: "POST",
        headers: { host: "agentd.example:7070", origin: "http://agentd.example:7070", accept: "application/json", cookie },
      });
    const acked = await asPerson("/status/incidents/1/ack");
    expect(acked.status).toBe(200);
    expect(((await acked.json()) as Incident).details.acknowledged_by).toBe("page:Alice <Smith>");
    const html = await (
      await app.request("/status/incidents/1", {
        headers: { host: "agentd.example:7070", accept: "text/html", cookie: `${TOKEN_COOKIE}=${TOKEN}` },
      })
    ).text();
    expect(html).toContain("by page:Alice &lt;Smith&gt;");
    // A cookie that was never the form's (set by hand) is refused, not recorded.
    const forged = await asPerson(
      "/status/incidents/1/resolve",
      `${TOKEN_COOKIE}=${TOKEN}; ${PERSON_COOKIE}=${encodeURIComponent("evil\u001b[2J")}`,
    );
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { error: { code: string; param: string } }).error).toMatchObject({
      code: "invalid_request",
      param: "name",
    });
    expect(((await (await asPerson("/status/incidents/1/resolve")).json()) as Incident).details.resolved_by).toBe("page:Alice <Smith>");
  });

  test("a login posted from another site is refused, and next never leaves this host", async () => {
    const app = guarded();
    const crossSite = await app.request("/login", form({ token: TOKEN }, { origin: "https://evil.example" }));
    expect(crossSite.status).toBe(403);
    for (const next of ["//evil.example/x", "https://evil.example", "/\\evil.example", "status", undefined])
      expect(safeNext(next)).toBe("/status");
    expect(safeNext("/status/incidents?page=2")).toBe("/status/incidents?page=2");
  });
});
