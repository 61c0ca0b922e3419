import { describe, expect, test } from "bun:test";
import { buildHealthDocument, type HealthCheck } from "../../src/core/health/index.ts";
import { domId } from "../../src/status/statusCard.tsx";
import { renderSection } from "../../src/status/statusFragments.tsx";
import { renderStatusHtml } from "../../src/status/statusHtml.tsx";
import type { StatusSnapshot } from "../../src/status/statusSnapshot.ts";
import { NOT_CONFIGURED } from "../../src/status/statusSource.ts";
import { EMPTY_TEXT } from "../../src/status/statusSections.ts";
import { renderStatusText, TEXT_WIDTH } from "../../src/status/statusText.ts";
import { renderTextTable } from "../../src/status/statusTextTable.ts";
import { formatAge, formatUptime, oneLine, truncate } from "../../src/status/statusFormat.ts";

const NOW = Date.parse("2025-03-04T05:06:07Z");
const EVIL = `<script>alert("x")</script>`;
const LONG = "x".repeat(500);

function snapshot(
  overrides: Partial<StatusSnapshot> = {},
  checks: HealthCheck[] = [{ key: "store:writable", status: "pass", observedValue: true }],
): StatusSnapshot {
  return {
    schema: 2,
    host: "testhost",
    verdict: { status: "pass", reason: "all checks pass, no open incident, nothing waits for approval", reasons: [] },
    silences: { configured: true, rows: [] },
    generated_at: new Date(NOW).toISOString(),
    health: buildHealthDocument({ version: "1.2.3", checks, notes: [], uptimeS: 185, memoryMb: 41.5, requestsTotal: 7 }),
    worker: { pid: 4242, supervisor_pid: 4200, version: "1.2.3", uptime_s: 185, restarts: 2, memory_mb: 41.5 },
    providers: { configured: true, rows: [] },
    watchdog: { configured: true, rows: [] },
    incidents: { configured: true, counts: { open: 0, acknowledged: 0, resolved: 0 }, rows: [] },
    sessions: { configured: true, total: 0, rows: [] },
    approvals: { configured: true, rows: [] },
    pty: { configured: true, rows: [] },
    hops: { configured: true, rows: [] },
    ...overrides,
  };
}

function full(): StatusSnapshot {
  return snapshot(
    {
      verdict: {
        status: "fail",
        reason: "agentd check failing: provider.openai:breaker",
        reasons: ["agentd check failing: provider.openai:breaker", "check failing: nginx", "1 approval waiting"],
      },
      providers: {
        configured: true,
        rows: [
          {
            name: "openai",
            state: "down",
            breaker: "open",
            breaker_retry_at: NOW + 90_000,
            requests: 120,
            errors: 7,
            p50_ms: 812,
            p95_ms: 15_300,
          },
        ],
      },
      watchdog: {
        configured: true,
        rows: [{ name: "nginx", kind: "http", state: "fail", last_change: NOW - 65_000, output: `connect ECONNREFUSED ${LONG}` }],
      },
      incidents: {
        configured: true,
        counts: { open: 1, acknowledged: 1, resolved: 40 },
        rows: [
          {
            id: 7,
            dedup_key: "k7",
            title: `worker crashed ${EVIL}`,
            category: "daemon",
            severity: "error",
            state: "open",
            first_seen: NOW - 600_000,
            last_seen: NOW - 5_000,
            count: 3,
            tier: 1,
            action: "restart",
            verdict: "pending",
          },
          {
            id: 8,
            dedup_key: "k8",
            title: LONG,
            category: "upstream",
            severity: "warn",
            state: "acknowledged",
            first_seen: NOW - 60_000,
            last_seen: NOW - 1_000,
            count: 1,
            tier: null,
            action: null,
            verdict: null,
          },
        ],
      },
      sessions: {
        configured: true,
        total: 31,
        rows: [
          {
            id: "s_1",
            target: "local",
            model: "gpt-4o-mini",
            state: "awaiting_approval",
            started_at: NOW - 120_000,
            last_activity: NOW - 3_000,
            title: LONG,
          },
        ],
      },
      approvals: {
        configured: true,
        rows: [
          {
            id: "ap_1",
            kind: "agent",
            requested_by: "agent session",
            session_id: "s_1",
            tool: "exec_command",
            scope: "sudo",
            summary: `sudo systemctl restart nginx; echo ${EVIL}`,
            requested_at: NOW - 30_000,
          },
        ],
      },
      pty: {
        configured: true,
        rows: [
          {
            id: "pty_1",
            command: `bash -c 'echo ${EVIL}'\n\u001b[31mred ${LONG}`,
            pid: 999,
            running: false,
            exit_code: 130,
            started_at: NOW - 50_000,
            last_output_at: NOW - 40_000,
          },
        ],
      },
      hops: {
        configured: true,
        rows: [
          {
            name: "db1",
            target: "ops@db1.example:2222",
            via: ["bastion", "jump2"],
            state: "connected",
            remote_version: "0.1.0",
            last_change: NOW - 3_600_000,
          },
        ],
      },
    },
    [
      { key: "store:writable", status: "pass", observedValue: true },
      { key: "provider.openai:breaker", status: "fail", output: `breaker open after 5 failures ${EVIL}` },
    ],
  );
}

const codePoints = (line: string) => [...line].length;

describe("text view", () => {
  test("every line fits in 100 columns, the text ends in a newline and has no ANSI by default", () => {
    const text = renderStatusText(full());
    expect(text.endsWith("\n")).toBe(true);
    for (const line of text.split("\n")) expect(codePoints(line)).toBeLessThanOrEqual(TEXT_WIDTH);
    expect(text).not.toContain("\u001b");
    expect(text).toContain("…");
  });

  test("the first line says status FAIL when the verdict fails (agentd status reads it), the reason follows", () => {
    const [first, reason] = renderStatusText(full()).split("\n");
    expect(first).toMatch(/^agentd 1\.2\.3 {2}status FAIL {2}host testhost {2}up 3m {2}at 2025-03-04 05:06:07Z$/);
    expect(reason).toBe("  agentd check failing: provider.openai:breaker");
  });

  test("values from commands and logs cannot break lines or send escape sequences", () => {
    const text = renderStatusText(full());
    const ptyLine = text.split("\n").find((line) => line.includes("pty_1"))!;
    expect(ptyLine).toContain(`bash -c 'echo ${EVIL}'`);
    expect(ptyLine).toContain("\uFFFD[31mred");
    expect(ptyLine).toContain("exit 130");
  });

  test("columns line up under their headers", () => {
    const lines = renderStatusText(full()).split("\n");
    const header = lines.find((line) => line.includes("REQUESTS"))!;
    const row = lines[lines.indexOf(header) + 1]!;
    expect(row.indexOf("openai")).toBe(header.indexOf("NAME"));
    expect(row.indexOf("down")).toBe(header.indexOf("STATE"));
    expect(row).toContain("open 1m");
    expect(row).toContain("812ms");
    expect(row).toContain("15.3s");
  });

  test("?color=1 paints states but keeps the visible width", () => {
    const text = renderStatusText(full(), { color: true });
    expect(text).toContain("\u001b[31mFAIL\u001b[0m");
    for (const line of text.split("\n")) expect(codePoints(line.replace(/\u001b\[[0-9;]*m/g, ""))).toBeLessThanOrEqual(TEXT_WIDTH);
  });

  test("empty sections say what empty means, absent capabilities say they are not configured", () => {
    const empty = renderStatusText(snapshot({ hops: { configured: false, note: NOT_CONFIGURED.hops, rows: [] } }));
    for (const text of [
      EMPTY_TEXT.providers,
      EMPTY_TEXT.incidents,
      EMPTY_TEXT.sessions,
      EMPTY_TEXT.approvals,
      EMPTY_TEXT.pty,
      EMPTY_TEXT.watchdog,
    ])
      expect(empty).toContain(text);
    expect(empty).toContain(`HOPS\n  not configured: ${NOT_CONFIGURED.hops}`);
    expect(empty).toContain("INCIDENTS  0 open, 0 acknowledged, 0 resolved");
  });

  test("a section that could not be read shows the error", () => {
    const text = renderStatusText(snapshot({ pty: { configured: true, error: "Cannot read the PTY sessions: boom", rows: [] } }));
    expect(text).toContain("PTY SESSIONS\n  error: Cannot read the PTY sessions: boom");
  });
});

describe("HTML view", () => {
  test("values are escaped: a <script> in a command, a title or a check output shows as text", () => {
    const html = renderStatusHtml(full());
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).not.toContain(EVIL);
    expect(html).not.toContain("<script>alert");
    expect(html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    // The only scripts are the two served from the binary.
    expect(html.match(/<script/g)?.length).toBe(2);
    expect(html).not.toMatch(/<script[^>]*>[^<]/);
    expect(html).not.toContain("style=");
  });

  test("long values are kept whole in wrapping cells (the page scrolls, nothing is cut)", () => {
    const html = renderStatusHtml(full());
    expect(html).toContain(LONG);
    expect(html).toContain(`<td class="text">${LONG}</td>`);
  });

  test("each section polls its own fragment and the banner starts hidden", () => {
    const html = renderStatusHtml(full());
    for (const name of ["health", "worker", "providers", "watchdog", "incidents", "sessions", "approvals", "pty", "hops"]) {
      expect(html).toContain(`id="section-${name}" class="card`);
      expect(html).toContain(`hx-get="/status/fragments/${name}" hx-trigger="every 3s, refresh from:body" hx-swap="outerHTML"`);
    }
    expect(html).toMatch(/<p id="connection-lost" class="banner" role="alert" hidden="">/);
  });

  test("open incidents have Acknowledge and Resolve; they work as plain forms without JavaScript", () => {
    const html = renderSection("incidents", full().incidents, NOW);
    expect(html).toContain('<form class="actions" method="post" action="/status/incidents/7/ack">');
    expect(html).toContain(
      'formaction="/status/incidents/7/ack" hx-post="/status/incidents/7/ack" hx-target="#incident-7" hx-swap="outerHTML" hx-disabled-elt="#incident-7 button">Acknowledge</button>',
    );
    expect(html).toContain('hx-post="/status/incidents/7/resolve"');
    // Acknowledged already: only Resolve is left.
    expect(html).not.toContain('hx-post="/status/incidents/8/ack"');
    expect(html).toContain('hx-post="/status/incidents/8/resolve"');
    expect(html).toContain("1 open, 1 acknowledged, 40 resolved");
  });

  test("pending approvals have three buttons posting the decision, disabled together while in flight", () => {
    const html = renderSection("approvals", full().approvals, NOW);
    expect(html).toContain(
      `action="/status/approvals/ap_1/decide" hx-post="/status/approvals/ap_1/decide" hx-target="this" hx-swap="outerHTML" hx-disabled-elt="#${domId("approval", "ap_1")} button"`,
    );
    for (const [value, label] of [
      ["allow_once", "Allow once"],
      ["allow_session", "Allow for session"],
      ["deny", "Deny"],
    ])
      expect(html).toContain(`name="decision" value="${value}"${value === "deny" ? ' class="danger"' : ""}>${label}</button>`);
    expect(html).toContain("echo &lt;script&gt;");
  });

  test("empty and absent sections render their texts", () => {
    const none = snapshot({ approvals: { configured: false, note: NOT_CONFIGURED.approvals, rows: [] } });
    expect(renderSection("approvals", none.approvals, NOW)).toContain(`Not configured: ${NOT_CONFIGURED.approvals.replace("'", "&#39;")}`);
    expect(renderSection("pty", none.pty, NOW)).toContain(EMPTY_TEXT.pty);
    expect(renderSection("providers", none.providers, NOW)).toContain("No provider is configured");
  });

  test("DOM ids from arbitrary ids stay valid and distinct", () => {
    expect(domId("approval", "a/1")).toBe("approval-a_2f1");
    expect(domId("approval", "a_2f1")).not.toBe(domId("approval", "a/1"));
    expect(domId("approval", "ap_1")).toBe("approval-ap_5f1");
    expect(domId("approval", 'x y"<')).toMatch(/^[A-Za-z0-9_-]+$/);
  });
});

describe("formatting", () => {
  test("uptime, ages and cuts", () => {
    expect(formatUptime(59)).toBe("59s");
    expect(formatUptime(185)).toBe("3m");
    expect(formatUptime(7300)).toBe("2h1m");
    expect(formatUptime(90_000)).toBe("1d1h");
    expect(formatAge(NOW - 65_000, NOW)).toBe("1m ago");
    expect(formatAge(NOW + 5_000, NOW)).toBe("0s ago");
    expect(formatAge(null, NOW)).toBe("-");
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("abc", 4)).toBe("abc");
    expect(oneLine("a\r\nb\tc\u0007")).toBe("a b c\uFFFD");
  });

  test("a table gives up width in its flex column first", () => {
    const lines = renderTextTable(
      [{ header: "ID" }, { header: "TITLE", flex: true }, { header: "N", align: "right" }],
      [["1", LONG, "5"]],
      40,
    );
    expect(lines[0]).toBe(`  ID  TITLE${" ".repeat(26)}  N`);
    expect(lines[1]!.length).toBe(40);
    expect(lines[1]).toEndWith("…  5");
  });
});
