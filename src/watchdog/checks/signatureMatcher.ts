import { lineBetween, parseLogLine, type LogRecord } from "../../core/log/index.ts";
import type { Signal } from "./signal.ts";
import type { SignatureConfig } from "../../core/config/sections/watchdogConfig.ts";

type FieldTest = [name: string, allowed: ReadonlySet<string>];

interface CompiledSignature {
  def: SignatureConfig;
  fieldTests: FieldTest[];
  regex?: RegExp;
  /** Parts of the component template: even indexes are text, odd ones field names. */
  componentParts: string[];
}

const EVENT_KEY = '"event":"';
/** Fields copied from a matched record onto the signal. */
const KEPT_FIELDS = ["provider", "status", "cause", "model", "tool", "outcome", "host", "port", "pid", "code"];
const MAX_LINE = 2000;
/**
 * Events whose only free text is what a client sent (the model name of `proxy.request`, one line
 * per proxied request): a regex-only signature never reads them, or a client could open a
 * "disk full" incident by naming its model "ENOSPC". Signatures that name the event still match.
 */
const CLIENT_TEXT_EVENTS: ReadonlySet<string> = new Set(["proxy.request"]);

function compile(def: SignatureConfig): CompiledSignature {
  const fieldTests: FieldTest[] = Object.entries(def.fields ?? {}).map(([name, value]) => [
    name,
    new Set((Array.isArray(value) ? value : [value]).map(String)),
  ]);
  return {
    def,
    fieldTests,
    regex: def.regex ? new RegExp(def.regex, "i") : undefined,
    componentParts: def.component.split(/\{([A-Za-z0-9_]+)\}/),
  };
}

/** More specific signatures first: a regex or field test narrows an event further. */
function specificity(s: CompiledSignature): number {
  return (s.regex ? 2 : 0) + (s.fieldTests.length > 0 ? 1 : 0);
}

/** Reads the event name of one of our JSON log lines without parsing it. */
export function peekEventName(line: string): string | undefined {
  if (line.charCodeAt(0) !== 123) return undefined;
  const at = line.indexOf(EVENT_KEY);
  if (at < 0) return undefined;
  const start = at + EVENT_KEY.length;
  const end = line.indexOf('"', start);
  return end < 0 ? undefined : line.slice(start, end);
}

/**
 * Matches log lines against the signature catalog. Built for throughput: signatures are compiled
 * once and indexed by event name, so a line whose event no signature names is dismissed without
 * JSON parsing; regex-only signatures share one combined prefilter expression.
 */
export class SignatureMatcher {
  readonly #byEvent = new Map<string, CompiledSignature[]>();
  readonly #textOnly: CompiledSignature[] = [];
  readonly #textPrefilter?: RegExp;
  /** How the event keys read of the lines `match` dismisses without a look (client-text events no signature names), closing quote included. */
  readonly #dismissedKeys: readonly string[];
  readonly size: number;

  constructor(signatures: readonly SignatureConfig[]) {
    const seen = new Set<string>();
    const compiled: CompiledSignature[] = [];
    for (const def of signatures) {
      if (seen.has(def.id)) continue;
      seen.add(def.id);
      compiled.push(compile(def));
    }
    this.size = compiled.length;
    for (const signature of compiled) {
      if (signature.def.event === undefined) this.#textOnly.push(signature);
      else {
        const list = this.#byEvent.get(signature.def.event) ?? [];
        list.push(signature);
        this.#byEvent.set(signature.def.event, list);
      }
    }
    for (const list of this.#byEvent.values()) list.sort((a, b) => specificity(b) - specificity(a));
    if (this.#textOnly.length > 0) this.#textPrefilter = new RegExp(this.#textOnly.map((s) => `(?:${s.def.regex})`).join("|"), "i");
    this.#dismissedKeys = [...CLIENT_TEXT_EVENTS].filter((event) => !this.#byEvent.has(event)).map((event) => `${EVENT_KEY}${event}"`);
  }

  /**
   * Calls `onLine` with each line of `block` (whole lines, each ended by LF; a CR before it is
   * dropped, as eachLine does) that `match` could raise a signal for, in order: a line of an event
   * it dismisses at a glance (`proxy.request`, nearly every line of a busy proxy) is passed over
   * without being cut out of the block. One pass over the block: the event key each line holds is
   * found by one search that goes on from where the last one stopped. Returns how many lines the
   * block holds (a last one without its LF counted).
   */
  eachCandidate(block: string, onLine: (line: string) => void): number {
    const keys = this.#dismissedKeys;
    // Where the next event key at or after the current line's start is; -1 when there is none left.
    let keyAt = keys.length > 0 ? block.indexOf(EVENT_KEY) : -1;
    let lines = 0;
    for (let start = 0; start < block.length; lines++) {
      const newline = block.indexOf("\n", start);
      const end = newline < 0 ? block.length : newline;
      if (keyAt >= 0 && keyAt < start) keyAt = block.indexOf(EVENT_KEY, start);
      // peekEventName's reading: a JSON line's first event key names its event.
      let dismissed = false;
      if (keyAt >= 0 && keyAt < end && block.charCodeAt(start) === 123)
        for (let i = 0; i < keys.length && !dismissed; i++) dismissed = block.startsWith(keys[i]!, keyAt);
      if (!dismissed) onLine(lineBetween(block, start, end));
      start = end + 1;
    }
    return lines;
  }

  /** The signal a line raises, or undefined. `now` stamps the signal. */
  match(line: string, now: number): Signal | undefined {
    const event = peekEventName(line);
    const candidates = event === undefined ? undefined : this.#byEvent.get(event);
    if (candidates) {
      const record = parseLogLine(line);
      if (record) {
        for (const signature of candidates) {
          if (this.#fits(signature, record, line)) return this.#signal(signature, record, line, now);
        }
      }
    }
    if (this.#textPrefilter && !(event !== undefined && CLIENT_TEXT_EVENTS.has(event)) && this.#textPrefilter.test(line)) {
      for (const signature of this.#textOnly) {
        if (signature.regex!.test(line)) return this.#signal(signature, event === undefined ? undefined : parseLogLine(line), line, now);
      }
    }
    return undefined;
  }

  #fits(signature: CompiledSignature, record: LogRecord, line: string): boolean {
    for (const [name, allowed] of signature.fieldTests) {
      const value = record[name];
      if (value === undefined || value === null || !allowed.has(String(value))) return false;
    }
    return signature.regex ? signature.regex.test(line) : true;
  }

  #signal(signature: CompiledSignature, record: LogRecord | undefined, line: string, now: number): Signal {
    const fields: Signal["fields"] = {};
    if (record) {
      for (const name of KEPT_FIELDS) {
        const value = record[name];
        if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") fields[name] = value;
      }
    }
    const parts = signature.componentParts;
    let component = "";
    for (let i = 0; i < parts.length; i++) component += i % 2 === 0 ? parts[i] : String(record?.[parts[i]!] ?? "unknown");
    const { id, title, category, severity } = signature.def;
    return { id, title, category, severity, component, ts: now, fields, line: line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line };
  }
}
