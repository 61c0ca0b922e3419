import { mysqlPasswordSpans } from "./mysqlPasswords.ts";

export const REDACTED = "[redacted]";

// "token" only as a whole word or suffix, so counters such as max_tokens stay readable.
const SECRET_NAME = /(authorization|api[-_]?key|secret|passw(or)?d|(^|[-_])token$|^token|cookie|credential|private[-_]?key)/i;
// Shapes of keys seen in practice: OpenAI/Anthropic (sk-…), GitHub (ghp_…), Slack (xox?-…), AWS (AKIA…), bearer tokens, JWTs.
// A key is looked for only where the run of its characters begins: from every later place in the same
// run (`-eyJ-eyJ…`, `sk-sk-…`) the pattern would scan that run again, and text a model writes could
// make that quadratic (64 KiB of `sk-…` took 1.1 s).
const SECRET_VALUE =
  /(?:(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{12,}|\b(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{16,}|(?<![A-Za-z0-9-])xox[abprs]-[A-Za-z0-9-]{10,}|\bAKIA[0-9A-Z]{16}|(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})\b/g;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
// An assignment: a whole word naming a secret, `=`, and its value. The value stops at a shell
// operator, also inside quotes: `TOKEN=x;sudo id` or `'API_KEY="'; sudo …; '"'` must not hide the
// command that follows from the logs and the approval's summary. Names are found by a walk from word
// to word: a pattern with a run on each side of the name's keyword retried its word's length at every
// place in it (64 KiB of `PASSWORD…` took 0.85 s).
const ASSIGNED_NAME = /\b([A-Za-z0-9_]+)=/g;
// MYSQL_PWD is mysql's password in the environment.
const SECRET_IN_NAME = /API_?KEY|SECRET|PASSWORD|TOKEN|_PWD$/i;
const ASSIGNED_VALUE = /"[^"\n;|&<>`]*"|'[^'\n;|&<>`]*'|[^\s;|&<>()`]+/y;
// Inside JSON text a shell quote is written \" (\\\" a level deeper: an odd run of backslashes) and a
// bare `"` ends the string: a value may be quoted so (else only its first word would be hidden), and
// what is hidden never runs past a `"` nor splits an escape, so the text stays the JSON it was.
// Runs of backslashes are short (each level of JSON doubles one): bounded, a long run is not retried.
// A quoted value holds no `,:{}[]` and an escaped quote is no value's start before one: between two
// strings of JSON held in the string (`MYSQL_PWD=\",\"cwd\"`) that is its structure, not a value.
const ASSIGNED_VALUE_IN_JSON =
  /(?<q>(?:\\\\){0,7}\\)"[^"\\\n;|&<>`,:{}[\]]*\k<q>"|'[^'"\\\n;|&<>`]*'|(?:(?:\\\\){0,7}\\"(?![,:{}[\]]))?[^\s;|&<>()`"\\]+/y;
// The same in JSON or header form: "api_key": "…", authorization: …
// Its value stops at a shell operator, as an assignment's does, and at a backslash (an escaped quote).
const JSON_FIELD = /("?(?:api[_-]?key|authorization|x-api-key|token|secret|password|passwd)"?\s*:\s*"?)([^"\s,}\]&;|<>`\\]+)/gi;
// A password in a URL's user part: postgres://app:HunterTwo99@db/… keeps the user and host. The
// scheme is bounded (real ones are short): unbounded, `a.a.a…` rescanned from every letter.
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/?#@'"]*:)([^\s/?#@'"]+)@/gi;
// Webhook URLs are credentials in themselves: whoever has one can post as the integration.
const WEBHOOK_URL =
  /\bhttps?:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)|(?:[a-z]+\.)?discord(?:app)?\.com\/api\/webhooks)\/[^\s'"<>]+/gi;
// A secret passed as an option: --password X, --db-password=X, --api-key X, --auth-token=X. Its name
// is bounded before the keyword, as the scheme above.
const OPTION_NAME = "((?:^|[\\s\"'])--?[A-Za-z0-9_-]{0,64}(?:passw(?:or)?d|secret|api[_-]?key|token)(?:=|\\s+))";
/** The value patterns of one way to read a text: plain (as the shell does), or as JSON text. */
interface Reading {
  assigned: RegExp;
  option: RegExp;
}

const PLAIN: Reading = {
  assigned: ASSIGNED_VALUE,
  option: new RegExp(`${OPTION_NAME}(${ASSIGNED_VALUE.source})`, "gi"),
};
const IN_JSON: Reading = {
  assigned: ASSIGNED_VALUE_IN_JSON,
  option: new RegExp(`${OPTION_NAME}(${ASSIGNED_VALUE_IN_JSON.source})`, "gi"),
};

/**
 * Replaces key-shaped substrings of a text: bearer tokens, sk-…, KEY=value and "key": value forms,
 * URL passwords, webhook URLs, password options and mysql's -p….
 */
export function redactText(text: string, json = false): string {
  const reading = json ? IN_JSON : PLAIN;
  const withoutValues = redactMysqlPasswords(
    text
      .replace(WEBHOOK_URL, REDACTED)
      .replace(URL_PASSWORD, `$1${REDACTED}@`)
      .replace(reading.option, (match, head: string, value: string) => (value.startsWith("-") ? match : `${head}${REDACTED}`)),
    json,
  );
  return (
    redactAssignments(withoutValues.replace(BEARER, `$1 ${REDACTED}`).replace(SECRET_VALUE, REDACTED), reading.assigned)
      // A value already redacted, or the scheme word of "Authorization: Bearer [redacted]", stays.
      .replace(JSON_FIELD, (match, head: string, value: string) =>
        value === REDACTED || /^(Bearer|Basic)$/i.test(value) ? match : `${head}${REDACTED}`,
      )
  );
}

/** Each `NAME=value` whose name names a secret, its value hidden; one pass, word by word. */
function redactAssignments(text: string, value: RegExp): string {
  let out = "";
  let from = 0;
  ASSIGNED_NAME.lastIndex = 0;
  for (let name = ASSIGNED_NAME.exec(text); name !== null; name = ASSIGNED_NAME.exec(text)) {
    if (!SECRET_IN_NAME.test(name[1]!)) continue;
    value.lastIndex = ASSIGNED_NAME.lastIndex;
    if (value.exec(text) === null) continue;
    out += text.slice(from, ASSIGNED_NAME.lastIndex) + REDACTED;
    from = value.lastIndex;
    ASSIGNED_NAME.lastIndex = from;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** mysql's `-pX` (mysqlPasswords.ts), each hidden. */
function redactMysqlPasswords(text: string, json: boolean): string {
  let out = "";
  let from = 0;
  for (const [start, end] of mysqlPasswordSpans(text, json)) {
    out += text.slice(from, start) + REDACTED;
    from = end;
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Text redaction that also knows the exact secrets agentd holds (provider keys, the model key), for
 * log lines stored on incidents or sent to a model.
 */
export class Redactor {
  readonly #known: string[];

  constructor(knownSecrets: Iterable<string | undefined> = []) {
    this.#known = [...knownSecrets].filter((s): s is string => typeof s === "string" && s.length >= 6).sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.#known) out = out.split(secret).join(REDACTED);
    return redactText(out);
  }
}

/** Deep copy with secret-named fields and key-shaped values replaced; safe on any JSON value. */
export function redactSecrets<T>(value: T, extraSecrets: readonly string[] = []): T {
  return redactValue(value, undefined, extraSecrets) as T;
}

function redactValue(value: unknown, key: string | undefined, extra: readonly string[]): unknown {
  if (typeof value === "string") {
    if (key !== undefined && SECRET_NAME.test(key) && value.length > 0) return REDACTED;
    let text = redactText(value, isJsonText(value));
    for (const secret of extra) if (secret.length >= 6 && text.includes(secret)) text = text.split(secret).join(REDACTED);
    return text;
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, undefined, extra));
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = redactValue(v, k, extra);
    return out;
  }
  return value;
}

/**
 * A string that holds a JSON object or array (a tool call's arguments as the model sent them): its
 * commands quote with \", which plain text (and the shell) reads as a literal character.
 */
function isJsonText(text: string): boolean {
  // JSON may stand between blanks (a trailing newline, jq's pretty printing): read as a command it would lose its shape.
  const trimmed = text.trim();
  const first = trimmed.charCodeAt(0);
  const last = trimmed.charCodeAt(trimmed.length - 1);
  if (!((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d))) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Headers as a plain object with credentials hidden. */
export function redactHeaders(headers: Headers | Record<string, string>, extraSecrets: readonly string[] = []): Record<string, string> {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  return Object.fromEntries(
    entries.map(([k, v]) => [k, SECRET_NAME.test(k) ? REDACTED : (redactValue(v, undefined, extraSecrets) as string)]),
  );
}
