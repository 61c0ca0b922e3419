import { Ago, Card, Pill, SectionBody } from "./statusCard.tsx";
import type { CheckResult } from "./checkHistory.ts";
import { formatTime, formatUptime } from "./statusFormat.ts";
import { EMPTY_TEXT, stateTone } from "./statusSections.ts";
import type { StatusSection, WatchdogCheckRow } from "./statusSnapshot.ts";

/** The recent results as a strip of cells, oldest left; each cell says its state and time (hover, or a screen reader). */
function HistoryStrip({ history }: { history: CheckResult[] }) {
  const label = history.map((result) => `${result.state} at ${formatTime(result.at)}`).join(", ");
  return (
    <span class="history" role="img" aria-label={`recent results, oldest first: ${label}`} data-field="history">
      {history.map((result) => (
        <span
          class={`cell tone-${stateTone(result.state)}`}
          title={`${result.state} at ${formatTime(result.at)}`}
          data-state={result.state}
        >
          <time datetime={new Date(result.at).toISOString()}></time>
        </span>
      ))}
    </span>
  );
}

function CheckState({ check, now }: { check: WatchdogCheckRow; now: number }) {
  return (
    <>
      <Pill text={check.state} />
      {check.severity === "critical" ? (
        <>
          {" "}
          <Pill text="critical" tone="fail" />
        </>
      ) : null}
      {check.silenced_until !== undefined && (
        <div class="note silenced" data-field="silenced">
          silenced until <time datetime={new Date(check.silenced_until).toISOString()}>{formatTime(check.silenced_until)}</time> (in{" "}
          {formatUptime((check.silenced_until - now) / 1000)})
        </div>
      )}
    </>
  );
}

/** The watchdog's checks, failing first: state, silence, recent results, output. */
export function ChecksCard({ data, now }: { data: StatusSection<WatchdogCheckRow>; now: number }) {
  const failing = data.rows.filter((check) => check.state === "fail").length;
  const silenced = data.rows.filter((check) => check.silenced_until !== undefined).length;
  const summary = data.configured
    ? `${data.rows.length} checks, ${failing} failing${silenced > 0 ? `, ${silenced} silenced` : ""}`
    : undefined;
  return (
    <Card name="watchdog" summary={summary}>
      <SectionBody section={data} empty={EMPTY_TEXT.watchdog}>
        <table>
          <thead>
            <tr>
              <th>Check</th>
              <th>State</th>
              <th>Recent</th>
              <th>Output</th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((check) => (
              <tr data-check={check.name} data-state={check.state}>
                <td>
                  <code>{check.name}</code>
                  <div class="note">
                    {check.kind}, <Ago at={check.last_change} now={now} />
                  </div>
                </td>
                <td>
                  <CheckState check={check} now={now} />
                </td>
                <td>{check.history && check.history.length > 0 ? <HistoryStrip history={check.history} /> : "-"}</td>
                <td class="text">{check.output ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </SectionBody>
    </Card>
  );
}
