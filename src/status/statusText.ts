import type { HealthStatus } from "../core/health/index.ts";
import { formatAge, formatMs, formatTime, formatUptime, oneLine, plural, textWidth, truncate } from "./statusFormat.ts";
import { EMPTY_TEXT, SECTION_TITLES, stateTone } from "./statusSections.ts";
import type { StatusSection, StatusSnapshot } from "./statusSnapshot.ts";
import { renderTextTable, type TextCell, type TextColumn } from "./statusTextTable.ts";

export { formatUptime };

export const TEXT_WIDTH = 100;

export interface TextOptions {
  /** ANSI colours for states (?color=1); off by default so pipes and logs stay clean. */
  color?: boolean;
}

const ANSI = { pass: "\u001b[32m", warn: "\u001b[33m", fail: "\u001b[31m", dim: "\u001b[2m", bold: "\u001b[1m", reset: "\u001b[0m" };
const ANSI_PATTERN = /\u001b\[[0-9;]*m/g;

function painter(color: boolean) {
  return (text: string, tone: HealthStatus | "neutral" | "dim" | "bold"): TextCell => {
    if (!color || tone === "neutral") return text;
    return { text, paint: (padded) => ANSI[tone] + padded + ANSI.reset };
  };
}

function sectionLines<Row>(title: string, summary: string, section: StatusSection<Row>, empty: string, table: () => string[]): string[] {
  const head = summary ? `${title}  ${summary}` : title;
  if (!section.configured) return [head, `  not configured: ${section.note ?? ""}`.trimEnd()];
  if (section.error) return [head, `  error: ${section.error}`];
  if (section.rows.length === 0) return [head, `  ${empty}`];
  return [head, ...table()];
}

/** The curl view: aligned plain text, no ANSI unless asked, ≤ 100 columns, ending in a newline. */
export function renderStatusText(snapshot: StatusSnapshot, options: TextOptions = {}): string {
  const color = options.color ?? false;
  const paint = painter(color);
  const now = Date.parse(snapshot.generated_at);
  const { health, worker } = snapshot;
  const table = (columns: TextColumn[], rows: TextCell[][]) => renderTextTable(columns, rows, TEXT_WIDTH);
  const checks = Object.entries(health.checks).flatMap(([key, list]) => list.map((check) => ({ key, ...check })));
  const failing = checks.filter((check) => check.status === "fail").length;
  const warn = checks.filter((check) => check.status === "warn").length;
  const { verdict } = snapshot;
  const statusWord = color ? `${ANSI[verdict.status]}${verdict.status.toUpperCase()}${ANSI.reset}` : verdict.status.toUpperCase();

  const lines: string[] = [
    `agentd ${oneLine(worker.version)}  status ${statusWord}  host ${oneLine(snapshot.host)}  up ${formatUptime(worker.uptime_s)}  at ${formatTime(now)}`,
    `  ${oneLine(verdict.reason)}`,
    ...verdict.reasons.slice(1).map((reason) => `  ${oneLine(reason)}`),
    "",
    ...sectionLines(SECTION_TITLES.approvals.toUpperCase(), "", snapshot.approvals, EMPTY_TEXT.approvals, () =>
      table(
        [
          { header: "ID" },
          { header: "ASKED BY" },
          { header: "TOOL" },
          { header: "SCOPE" },
          { header: "WAITING" },
          { header: "WHAT", flex: true },
        ],
        snapshot.approvals.rows.map((a) => [
          a.id,
          a.session_id ? `${a.requested_by} ${a.session_id}` : `${a.requested_by} #${a.incident_id ?? "?"}`,
          a.tool,
          a.scope,
          formatAge(a.requested_at, now),
          a.task ? `${a.summary}  (why: ${oneLine(a.task)})` : a.summary,
        ]),
      ),
    ),
    "",
    `${SECTION_TITLES.health.toUpperCase()}  ${health.status}, ${plural(checks.length, "check")}, ${failing} failing${warn > 0 ? `, ${warn} warn` : ""}`,
    ...(checks.length === 0
      ? [`  ${EMPTY_TEXT.health}`]
      : table(
          [{ header: "CHECK" }, { header: "STATE" }, { header: "VALUE" }, { header: "OUTPUT", flex: true }],
          checks.map((check) => [
            check.key,
            paint(check.status, check.status),
            check.observedValue === undefined ? "" : `${check.observedValue}${check.observedUnit ? ` ${check.observedUnit}` : ""}`,
            check.output ?? "",
          ]),
        )),
    ...(health.notes.length ? ["", "NOTES", ...health.notes.map((note) => `  ${oneLine(note)}`)] : []),
    "",
    SECTION_TITLES.worker.toUpperCase(),
    `  pid ${worker.pid}  supervisor ${worker.supervisor_pid ?? "-"}  restarts ${worker.restarts}  memory ${worker.memory_mb} MB  up ${formatUptime(worker.uptime_s)}`,
    "",
    ...sectionLines(SECTION_TITLES.providers.toUpperCase(), "", snapshot.providers, EMPTY_TEXT.providers, () =>
      table(
        [
          { header: "NAME", flex: true },
          { header: "STATE" },
          { header: "BREAKER" },
          { header: "REQUESTS", align: "right" },
          { header: "ERRORS", align: "right" },
          { header: "P50", align: "right" },
          { header: "P95", align: "right" },
        ],
        snapshot.providers.rows.map((p) => [
          p.name,
          paint(p.state, stateTone(p.state)),
          paint(
            p.breaker === "open" && p.breaker_retry_at ? `open ${formatUptime((p.breaker_retry_at - now) / 1000)}` : p.breaker,
            stateTone(p.breaker),
          ),
          String(p.requests),
          String(p.errors),
          formatMs(p.p50_ms),
          formatMs(p.p95_ms),
        ]),
      ),
    ),
    "",
    ...sectionLines(SECTION_TITLES.watchdog.toUpperCase(), "", snapshot.watchdog, EMPTY_TEXT.watchdog, () =>
      table(
        [{ header: "CHECK" }, { header: "KIND" }, { header: "STATE" }, { header: "CHANGED" }, { header: "OUTPUT", flex: true }],
        snapshot.watchdog.rows.map((c) => [
          c.name,
          c.kind,
          paint(c.state, stateTone(c.state)),
          formatAge(c.last_change, now),
          `${c.silenced_until !== undefined ? `silenced until ${formatTime(c.silenced_until)}; ` : ""}${c.output ?? ""}`,
        ]),
      ),
    ),
    "",
    ...sectionLines(
      SECTION_TITLES.incidents.toUpperCase(),
      `${snapshot.incidents.counts.open} open, ${snapshot.incidents.counts.acknowledged} acknowledged, ${snapshot.incidents.counts.resolved} resolved`,
      snapshot.incidents,
      EMPTY_TEXT.incidents,
      () =>
        table(
          [
            { header: "ID", align: "right" },
            { header: "STATE" },
            { header: "SEVERITY" },
            { header: "COUNT", align: "right" },
            { header: "LAST SEEN" },
            { header: "TITLE", flex: true },
          ],
          snapshot.incidents.rows.map((i) => [
            String(i.id),
            paint(i.state, i.state === "open" ? "fail" : "warn"),
            i.severity,
            String(i.count),
            formatAge(i.last_seen, now),
            i.title,
          ]),
        ),
    ),
    "",
    ...sectionLines(SECTION_TITLES.silences.toUpperCase(), "", snapshot.silences, EMPTY_TEXT.silences, () =>
      table(
        [{ header: "TARGET" }, { header: "UNTIL" }, { header: "REASON", flex: true }],
        snapshot.silences.rows.map((silence) => [silence.target, formatTime(silence.until), silence.reason ?? ""]),
      ),
    ),
    "",
    ...sectionLines(
      SECTION_TITLES.sessions.toUpperCase(),
      snapshot.sessions.configured ? `${snapshot.sessions.total} total` : "",
      snapshot.sessions,
      EMPTY_TEXT.sessions,
      () =>
        table(
          [
            { header: "ID" },
            { header: "TARGET" },
            { header: "MODEL" },
            { header: "STATE" },
            { header: "ACTIVE" },
            { header: "TITLE", flex: true },
          ],
          snapshot.sessions.rows.map((s) => [
            s.id,
            s.target,
            s.model,
            paint(s.state, stateTone(s.state)),
            formatAge(s.last_activity, now),
            s.title ?? "",
          ]),
        ),
    ),
    "",
    ...sectionLines(SECTION_TITLES.pty.toUpperCase(), "", snapshot.pty, EMPTY_TEXT.pty, () =>
      table(
        [
          { header: "ID" },
          { header: "PID", align: "right" },
          { header: "STATE" },
          { header: "STARTED" },
          { header: "OUTPUT" },
          { header: "COMMAND", flex: true },
        ],
        snapshot.pty.rows.map((p) => [
          p.id,
          String(p.pid),
          p.running ? paint("running", "pass") : paint(`exit ${p.exit_code ?? "?"}`, p.exit_code === 0 ? "neutral" : "fail"),
          formatAge(p.started_at, now),
          formatAge(p.last_output_at, now),
          p.command,
        ]),
      ),
    ),
    "",
    ...sectionLines(SECTION_TITLES.hops.toUpperCase(), "", snapshot.hops, EMPTY_TEXT.hops, () =>
      table(
        [
          { header: "NAME" },
          { header: "TARGET" },
          { header: "VIA" },
          { header: "STATE" },
          { header: "VERSION" },
          { header: "CHANGED" },
          { header: "OUTPUT", flex: true },
        ],
        snapshot.hops.rows.map((h) => [
          h.name,
          h.target,
          h.via.join(",") || "-",
          paint(h.state, stateTone(h.state)),
          h.remote_version ?? "-",
          formatAge(h.last_change, now),
          h.output ?? "",
        ]),
      ),
    ),
  ];
  return `${lines.map(clampLine).join("\n")}\n`;
}

/** The last guard on width: measures what the terminal shows (ANSI excluded) and cuts plain lines. */
function clampLine(line: string): string {
  const visible = line.replace(ANSI_PATTERN, "");
  if (textWidth(visible) <= TEXT_WIDTH) return line;
  return truncate(visible, TEXT_WIDTH);
}
