import { redactText } from "../core/redaction/index.ts";
import type { Incident, IncidentEvent } from "../watchdog/index.ts";
import { Ago, Pill } from "./statusCard.tsx";
import { formatTime } from "./statusFormat.ts";
import { IncidentActionRequest } from "./statusIncidentAction.tsx";
import { incidentTimeline } from "./statusIncidentTimeline.ts";
import { Layout, pageTitle } from "./statusLayout.tsx";
import type { WatchdogCheckRow } from "./statusSnapshot.ts";
import { terminalText } from "../core/text/index.ts";

/** Details the page shows in words elsewhere (who and when for state changes, the component). */
const SHOWN_DETAILS = /^(component|signal|output|output_at|(acknowledged|resolved)_(at|by))$/;

/** A time as a person reads it: UTC to the second, and how long ago. */
function When({ at, now }: { at: number; now: number }) {
  return (
    <>
      <time datetime={new Date(at).toISOString()}>{formatTime(at)}</time> (<Ago at={at} now={now} />)
    </>
  );
}

/**
 * What the check printed when it failed, newest first (at most three): the latest output the
 * incident keeps (a check still failing updates it each run), then its recorded signals' lines.
 */
function signalLines(incident: Incident, events: IncidentEvent[]): Array<{ at: number; line: string }> {
  const recorded = events
    .filter((event) => event.kind === "signal" && typeof event.fields.line === "string" && event.fields.line)
    .map((event) => ({ at: event.ts, line: String(event.fields.line) }))
    .reverse();
  const { output, output_at: outputAt } = incident.details;
  if (typeof output === "string" && output && typeof outputAt === "number" && outputAt > (recorded[0]?.at ?? -Infinity))
    recorded.unshift({ at: outputAt, line: output });
  // A check failing the same way at every run says it once, at its newest time.
  const distinct = recorded.filter((entry, index) => recorded.findIndex((other) => other.line === entry.line) === index);
  return distinct.slice(0, 3).map((entry) => ({ at: entry.at, line: redactText(terminalText(entry.line)) }));
}

function StateFact({ incident, now }: { incident: Incident; now: number }) {
  const { details } = incident;
  const by = details[`${incident.state}_by`];
  const at = details[`${incident.state}_at`];
  return (
    <dd data-field="state">
      <Pill text={incident.state} tone={incident.state === "open" ? "fail" : incident.state === "acknowledged" ? "warn" : "pass"} />
      {typeof by === "string" && <> by {by}</>}
      {typeof at === "number" && (
        <>
          , <When at={at} now={now} />
        </>
      )}
    </dd>
  );
}

function OutputCard({
  incident,
  events,
  check,
  now,
}: {
  incident: Incident;
  events: IncidentEvent[];
  check?: WatchdogCheckRow;
  now: number;
}) {
  const said = signalLines(incident, events);
  return (
    <section class="card" data-field="output">
      <h2>Output</h2>
      {said.length === 0 && !check && <p class="empty">No output recorded: the signals of this incident carried none.</p>}
      {said.map((entry) => (
        <>
          <p class="meta">
            at <When at={entry.at} now={now} />
          </p>
          <pre class="details output">{entry.line}</pre>
        </>
      ))}
      {check && (
        <>
          <p class="meta" data-field="check-now">
            check <code>{check.name}</code> now: <Pill text={check.state} />
            {check.last_change !== null && (
              <>
                {" "}
                since <When at={check.last_change} now={now} />
              </>
            )}
          </p>
          {check.output && redactText(terminalText(check.output)) !== said[0]?.line && (
            <pre class="details output">{redactText(terminalText(check.output))}</pre>
          )}
        </>
      )}
    </section>
  );
}

const isTimeKey = (key: string) => key === "at" || key.endsWith("_at");

/** One recorded value in words: a number under a time key as a time, a list as a list, an object as its facts; depth-bounded. */
function DetailValue({ name, value, now, depth = 0 }: { name: string; value: unknown; now: number; depth?: number }) {
  if (isTimeKey(name) && typeof value === "number" && Number.isFinite(value)) return <When at={value} now={now} />;
  if (typeof value === "string") return <>{redactText(terminalText(value))}</>;
  if (value === null || typeof value !== "object" || depth >= 2) return <code>{redactText(JSON.stringify(value) ?? String(value))}</code>;
  if (Array.isArray(value))
    return (
      <ul class="plain">
        {value.map((item) => (
          <li>
            <DetailValue name={name} value={item} now={now} depth={depth + 1} />
          </li>
        ))}
      </ul>
    );
  return (
    <span class="fields">
      {Object.entries(value).map(([key, item], index) => (
        <>
          {index > 0 ? "; " : ""}
          {key.replaceAll("_", " ")}: <DetailValue name={key} value={item} now={now} depth={depth + 1} />
        </>
      ))}
    </span>
  );
}

/** Anything else the incident recorded, one fact a line, in words (DetailValue). */
function OtherDetails({ details, now }: { details: Record<string, unknown>; now: number }) {
  const rest = Object.entries(details).filter(([key]) => !SHOWN_DETAILS.test(key));
  if (rest.length === 0) return null;
  return (
    <section class="card">
      <h2>Other details</h2>
      <dl class="facts">
        {rest.map(([key, value]) => (
          <>
            <dt>{key.replaceAll("_", " ")}</dt>
            <dd>
              <DetailValue name={key} value={value} now={now} />
            </dd>
          </>
        ))}
      </dl>
    </section>
  );
}

export interface IncidentDetailProps {
  incident: Incident;
  events: IncidentEvent[];
  /** The check the incident is about (its component is check:NAME), as it is now. */
  check?: WatchdogCheckRow;
  now: number;
}

/** One incident for the person on call: its state and who set it, the check's output, the timeline in words. */
export function IncidentDetailPage({ incident, events, check, now }: IncidentDetailProps) {
  const { details, action_request: request } = incident;
  const component = typeof details.component === "string" ? details.component : null;
  const url = `/status/incidents/${incident.id}`;
  return (
    <Layout title={pageTitle(`incident ${incident.id}`)} generatedAt={now} live single>
      <section class="card">
        <h2>
          Incident {incident.id}: {incident.title}
        </h2>
        <dl class="facts">
          <dt>state</dt>
          <StateFact incident={incident} now={now} />
          <dt>severity</dt>
          <dd>
            {incident.severity}, {incident.category}
          </dd>
          {component && (
            <>
              <dt>component</dt>
              <dd>
                <code>{component}</code>
              </dd>
            </>
          )}
          <dt>first seen</dt>
          <dd>
            <When at={incident.first_seen} now={now} />
          </dd>
          <dt>last seen</dt>
          <dd>
            <When at={incident.last_seen} now={now} />, {incident.count === 1 ? "once" : `${incident.count} times`}
          </dd>
          {(incident.tier !== null || incident.action || incident.verdict) && (
            <>
              <dt>watchdog</dt>
              <dd>
                {[
                  incident.tier !== null ? `tier ${incident.tier}` : "",
                  incident.action ?? "",
                  incident.verdict ? `verdict ${incident.verdict}` : "",
                ]
                  .filter(Boolean)
                  .join(", ")}
              </dd>
            </>
          )}
        </dl>
        {incident.state !== "resolved" && (
          <form class="actions" method="post" action={`${url}/${incident.state === "open" ? "ack" : "resolve"}`}>
            {incident.state === "open" && (
              <button type="submit" formaction={`${url}/ack`}>
                Acknowledge
              </button>
            )}
            <button type="submit" formaction={`${url}/resolve`}>
              Resolve
            </button>
          </form>
        )}
      </section>
      <OutputCard incident={incident} events={events} check={check} now={now} />
      {request && <IncidentActionRequest request={request} now={now} />}
      <section class="card">
        <h2>Timeline</h2>
        <ol class="timeline">
          {incidentTimeline(incident, events).map((entry) => (
            <li>
              <When at={entry.at} now={now} /> {entry.label}
              {entry.by ? ` by ${entry.by}` : ""}
              {entry.note ? `: ${redactText(terminalText(entry.note))}` : ""}
            </li>
          ))}
        </ol>
      </section>
      <OtherDetails details={details} now={now} />
      <p class="meta">
        <a href={`${url}?format=json`}>This incident as JSON</a>
      </p>
    </Layout>
  );
}
