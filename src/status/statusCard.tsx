import type { Child } from "hono/jsx";
import { formatAge, formatTime } from "./statusFormat.ts";
import { SECTION_TITLES, stateTone } from "./statusSections.ts";
import type { SectionName, StatusSection } from "./statusSnapshot.ts";

/** How often a section asks for itself again (htmx `every`); paused while the tab is hidden. */
export const POLL_INTERVAL = "3s";

/**
 * A poll not answered by the next one is a lost connection (a hung worker accepts and never
 * answers): htmx aborts it and fires htmx:timeout, which the page script turns into the banner.
 */
export const POLL_REQUEST = JSON.stringify({ timeout: 2500 });

/** A DOM id from any string: characters outside [A-Za-z0-9-] (the escape "_" too) become _hex, so distinct ids stay distinct. */
export function domId(prefix: string, id: string | number): string {
  return `${prefix}-${String(id).replace(/[^A-Za-z0-9-]/g, (c) => `_${c.codePointAt(0)!.toString(16)}`)}`;
}

export function Pill({ text, tone }: { text: string; tone?: string }) {
  return <span class={`pill tone-${tone ?? stateTone(text)}`}>{text}</span>;
}

export function Ago({ at, now }: { at: number | null | undefined; now: number }) {
  if (at === null || at === undefined) return <span>-</span>;
  return (
    <time datetime={new Date(at).toISOString()} title={formatTime(at)}>
      {formatAge(at, now)}
    </time>
  );
}

interface CardProps {
  name: SectionName;
  summary?: string;
  wide?: boolean;
  /** Draws the eye: something here waits for a person. */
  tone?: "warn";
  children?: Child;
}

/** A section that replaces itself with a fresh copy from /status/fragments/<name>. */
export function Card({ name, summary, wide, tone, children }: CardProps) {
  return (
    <section
      id={`section-${name}`}
      class={["card", wide ? "wide" : "", tone ? `attention-${tone}` : ""].filter(Boolean).join(" ")}
      data-poll={POLL_INTERVAL}
      hx-get={`/status/fragments/${name}`}
      hx-trigger={`every ${POLL_INTERVAL}, refresh from:body`}
      hx-swap="outerHTML"
      hx-request={POLL_REQUEST}
    >
      <h2>
        {SECTION_TITLES[name]}
        {summary ? <span class="summary">{summary}</span> : null}
      </h2>
      {children}
    </section>
  );
}

export function SectionBody<Row>({ section, empty, children }: { section: StatusSection<Row>; empty: string; children?: Child }) {
  if (!section.configured) return <p class="note">Not configured: {section.note ?? ""}</p>;
  if (section.error) return <p class="error">{section.error}</p>;
  if (section.rows.length === 0) return <p class="empty">{empty}</p>;
  return <div class="table-wrap">{children}</div>;
}
