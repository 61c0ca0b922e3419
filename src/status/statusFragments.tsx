import type { HealthDocument } from "../core/health/index.ts";
import { Ago, Card, Pill, SectionBody } from "./statusCard.tsx";
import { formatMs, formatUptime, plural } from "./statusFormat.ts";
import { EMPTY_TEXT } from "./statusSections.ts";
import type { SectionName, StatusSnapshot, WorkerInfo } from "./statusSnapshot.ts";
import { IncidentTable, SessionTable } from "./statusTables.tsx";
import { ApprovalsCard } from "./statusQueue.tsx";
import { VerdictBanner } from "./statusVerdict.tsx";
import { SilencesCard } from "./statusSilences.tsx";
import { ChecksCard } from "./statusChecksCard.tsx";

function HealthCard({ health }: { health: HealthDocument }) {
  const checks = Object.entries(health.checks).flatMap(([key, list]) => list.map((check) => ({ key, ...check })));
  const failing = checks.filter((check) => check.status === "fail").length;
  const warn = checks.filter((check) => check.status === "warn").length;
  const why = checks.filter((check) => check.status !== "pass");
  return (
    <Card name="health" summary={`${plural(checks.length, "check")}, ${failing} failing${warn > 0 ? `, ${warn} warn` : ""}`}>
      <p>
        <span class={`pill overall tone-${health.status}`}>{health.status}</span>
      </p>
      {why.length > 0 && (
        <ul class="why">
          {why.map((check) => (
            <li>
              <Pill text={check.status} /> <code>{check.key}</code> {check.output ?? ""}
            </li>
          ))}
        </ul>
      )}
      {health.notes.length > 0 && (
        <ul class="why">
          {health.notes.map((note) => (
            <li class="note">{note}</li>
          ))}
        </ul>
      )}
      {checks.length === 0 ? (
        <p class="empty">{EMPTY_TEXT.health}</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Check</th>
                <th>State</th>
                <th>Value</th>
              </tr>
            </thead>
            <tbody>
              {checks.map((check) => (
                <tr>
                  <td>
                    <code>{check.key}</code>
                  </td>
                  <td>
                    <Pill text={check.status} />
                  </td>
                  <td class="text">
                    {check.observedValue === undefined ? "" : `${check.observedValue}${check.observedUnit ? ` ${check.observedUnit}` : ""}`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Card>
  );
}

function WorkerCard({ worker }: { worker: WorkerInfo }) {
  return (
    <Card name="worker" summary={`up ${formatUptime(worker.uptime_s)}`}>
      <dl class="facts">
        <dt>pid</dt>
        <dd class="mono" data-field="worker-pid">
          {worker.pid}
        </dd>
        <dt>supervisor</dt>
        <dd class="mono">{worker.supervisor_pid ?? "-"}</dd>
        <dt>version</dt>
        <dd>{worker.version}</dd>
        <dt>restarts</dt>
        <dd>{worker.restarts}</dd>
        <dt>memory</dt>
        <dd>{worker.memory_mb} MB</dd>
      </dl>
      {worker.privilege_gate_problem && (
        <p class="gate-warning" data-field="privilege-gate">
          <Pill text="warn" /> Unguarded: {worker.privilege_gate_problem}
        </p>
      )}
      {worker.privilege_gate?.limits && (
        <p class="gate-note" data-field="privilege-gate-limits">
          Gate: {worker.privilege_gate.mode}. Not covered: {worker.privilege_gate.limits}
        </p>
      )}
    </Card>
  );
}

const SECTIONS: { [K in SectionName]: (props: { data: StatusSnapshot[K]; now: number }) => unknown } = {
  health: ({ data }) => <HealthCard health={data} />,
  worker: ({ data }) => <WorkerCard worker={data} />,
  providers: ({ data, now }) => (
    <Card name="providers" summary={data.configured ? plural(data.rows.length, "provider") : undefined}>
      <SectionBody section={data} empty={EMPTY_TEXT.providers}>
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>State</th>
              <th>Breaker</th>
              <th class="num">Requests</th>
              <th class="num">Errors</th>
              <th class="num opt">p50</th>
              <th class="num">p95</th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((p) => (
              <tr>
                <td>
                  <code>{p.name}</code>
                </td>
                <td>
                  <Pill text={p.state} />
                </td>
                <td>
                  <Pill text={p.breaker} />
                  {p.breaker === "open" && p.breaker_retry_at ? (
                    <span class="note"> retry in {formatUptime((p.breaker_retry_at - now) / 1000)}</span>
                  ) : null}
                </td>
                <td class="num">{p.requests}</td>
                <td class="num">{p.errors}</td>
                <td class="num opt">{formatMs(p.p50_ms)}</td>
                <td class="num">{formatMs(p.p95_ms)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </SectionBody>
    </Card>
  ),
  watchdog: ({ data, now }) => <ChecksCard data={data} now={now} />,
  incidents: ({ data, now }) => (
    <Card
      name="incidents"
      wide
      summary={`${data.counts.open} open, ${data.counts.acknowledged} acknowledged, ${data.counts.resolved} resolved`}
    >
      <SectionBody section={data} empty={EMPTY_TEXT.incidents}>
        <IncidentTable rows={data.rows} now={now} />
      </SectionBody>
      <p class="pager">
        <a href="/status/incidents">All incidents ({data.counts.open + data.counts.acknowledged + data.counts.resolved})</a>
      </p>
    </Card>
  ),
  sessions: ({ data, now }) => (
    <Card name="sessions" wide summary={data.configured ? `${data.total} total` : undefined}>
      <SectionBody section={data} empty={EMPTY_TEXT.sessions}>
        <SessionTable rows={data.rows} now={now} />
      </SectionBody>
      {data.configured && data.total > data.rows.length && (
        <p class="pager">
          <a href="/status/sessions">All sessions ({data.total})</a>
        </p>
      )}
    </Card>
  ),
  approvals: ({ data, now }) => <ApprovalsCard data={data} now={now} />,
  verdict: ({ data, now }) => <VerdictBanner verdict={data} now={now} />,
  silences: ({ data, now }) => <SilencesCard data={data} now={now} />,
  pty: ({ data, now }) => (
    <Card name="pty" summary={data.configured ? `${data.rows.filter((p) => p.running).length} running` : undefined}>
      <SectionBody section={data} empty={EMPTY_TEXT.pty}>
        <table>
          <thead>
            <tr>
              <th class="opt">Id</th>
              <th class="num">Pid</th>
              <th>State</th>
              <th class="opt">Started</th>
              <th class="opt">Output</th>
              <th>Command</th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((p) => (
              <tr>
                <td class="opt">
                  <code>{p.id}</code>
                </td>
                <td class="num">{p.pid}</td>
                <td>
                  {p.running ? (
                    <Pill text="running" />
                  ) : (
                    <Pill text={`exit ${p.exit_code ?? "?"}`} tone={p.exit_code === 0 ? "neutral" : "fail"} />
                  )}
                </td>
                <td class="opt">
                  <Ago at={p.started_at} now={now} />
                </td>
                <td class="opt">
                  <Ago at={p.last_output_at} now={now} />
                </td>
                <td class="text">
                  <code>{p.command}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </SectionBody>
    </Card>
  ),
  hops: ({ data, now }) => (
    <Card name="hops">
      <SectionBody section={data} empty={EMPTY_TEXT.hops}>
        <table>
          <thead>
            <tr>
              <th>Name</th>
              <th>Target</th>
              <th class="opt">Via</th>
              <th>State</th>
              <th>Remote health</th>
              <th class="opt">Version</th>
              <th class="opt">Changed</th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((h) => (
              <tr>
                <td>
                  <code>{h.name}</code>
                </td>
                <td class="text">
                  <code>{h.target}</code>
                </td>
                <td class="text opt">{h.via.join(", ") || "-"}</td>
                <td>
                  <Pill text={h.state} />
                  {h.output ? <div class="note">{h.output}</div> : null}
                </td>
                <td>
                  {h.health ? <Pill text={h.health} /> : "-"}
                  {typeof h.incidents_open === "number" ? (
                    <div class="note">{h.incidents_open === 1 ? "1 open incident" : `${h.incidents_open} open incidents`}</div>
                  ) : null}
                  {h.gate ? <div class="note">gate: {h.gate}</div> : null}
                </td>
                <td class="opt">{h.remote_version ?? "-"}</td>
                <td class="opt">
                  <Ago at={h.last_change} now={now} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </SectionBody>
    </Card>
  ),
};

/** One section as an element: the page composes them, the fragment route renders one. */
export function sectionElement<K extends SectionName>(name: K, data: StatusSnapshot[K], now: number): unknown {
  const render = SECTIONS[name] as (props: { data: StatusSnapshot[K]; now: number }) => unknown;
  return render({ data, now });
}

export function renderSection<K extends SectionName>(name: K, data: StatusSnapshot[K], now: number): string {
  return String(sectionElement(name, data, now));
}
