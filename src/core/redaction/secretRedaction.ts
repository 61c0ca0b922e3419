export const REDACTED = "[redacted]";

// Every run a pattern retries from each place it could start is bounded (a name, a scheme, a key):
// unbounded, text a model writes could make one retry to the end from every start, quadratic:
// 64 KiB of `a.a.a…` took 1.6 s, of `PASSWORD…` 0.85 s. Real names, schemes and keys fit the bounds.

// "token" only as a whole word or suffix, so counters such as max_tokens stay readable.
const SECRET_NAME = /(authorization|api[-_]?key|secret|passw(or)?d|(^|[-_])token$|^token|cookie|credential|private[-_]?key)/i;
// Shapes of keys seen in practice: OpenAI/Anthropic (sk-…), GitHub (ghp_…), Slack (xox?-…), AWS (AKIA…), bearer tokens, JWTs.
const SECRET_VALUE =
  /\b(sk-[A-Za-z0-9_-]{12,512}|(?:ghp|gho|ghu|ghs|github_pat)_[A-Za-z0-9_]{16,512}|xox[abprs]-[A-Za-z0-9-]{10,512}|AKIA[0-9A-Z]{16}|eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{8,4096})\b/g;
const BEARER = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi;
// The value stops at a shell operator, also inside quotes: `TOKEN=x;sudo id` or `'API_KEY="'; sudo …; '"'`
// must not hide the command that follows from the logs and the approval's summary.
const ASSIGNMENT =
  /\b([A-Za-z0-9_]{0,64}(?:API_?KEY|SECRET|PASSWORD|TOKEN)[A-Za-z0-9_]{0,64})=("[^"\n;|&<>`]*"|'[^'\n;|&<>`]*'|[^\s;|&<>()`]+)/gi;
// The same in JSON or header form: "api_key": "…", authorization: …
const JSON_FIELD = /("?(?:api[_-]?key|authorization|x-api-key|token|secret|password|passwd)"?\s*:\s*"?)([^"\s,}&]+)/gi;
// A password in a URL's user part: postgres://app:HunterTwo99@db/… keeps the user and host.
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]{0,31}:\/\/[^\s:/?#@'"]*:)([^\s/?#@'"]+)@/gi;
// Webhook URLs are credentials in themselves: whoever has one can post as the integration.
const WEBHOOK_URL =
  /\bhttps?:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)|(?:[a-z]+\.)?discord(?:app)?\.com\/api\/webhooks)\/[^\s'"<>]+/gi;
// A secret passed as an option: --password X, --db-password=X, --api-key X, --auth-token=X.
const OPTION_SECRET =
  /((?:^|[\s"'])--?[A-Za-z0-9_-]{0,64}(?:passw(?:or)?d|secret|api[_-]?key|token)(?:=|\s+))("[^"\n]*"|'[^'\n]*'|[^\s;|&<>()`]+)/gi;
// The MySQL clients take the password glued to -p (mysql -uroot -pX): only after their command word,
// since -p means something else elsewhere (mkdir -p, ssh -p 22).
const MYSQL_PASSWORD =
  /(\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb|mariadb-dump)\b[^\n;|&]{0,512}?\s-p)([^\s;|&<>()`]+)/g;

/**
 * Replaces key-shaped substrings of a text: bearer tokens, sk-…, KEY=value and "key": value forms,
 * URL passwords, webhook URLs, password options and mysql's -p….
 */
export function redactText(text: string): string {
  return (
    text
      .replace(WEBHOOK_URL, REDACTED)
      .replace(URL_PASSWORD, `$1${REDACTED}@`)
      .replace(OPTION_SECRET, (match, head: string, value: string) => (value.startsWith("-") ? match : `${head}${REDACTED}`))
      .replace(MYSQL_PASSWORD, `$1${REDACTED}`)
      .replace(BEARER, `$1 ${REDACTED}`)
      .replace(SECRET_VALUE, REDACTED)
      .replace(ASSIGNMENT, `$1=${REDACTED}`)
      // A value already redacted, or the scheme word of "Authorization: Bearer [redacted]", stays.
      .replace(JSON_FIELD, (match, head: string, value: string) =>
        value === REDACTED || /^(Bearer|Basic)$/i.test(value) ? match : `${head}${REDACTED}`,
      )
  );
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
    const decoded = redactedJsonText(value, extra);
    if (decoded !== undefined) return decoded;
    let text = redactText(value);
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
 * A string that holds a JSON object or array (a tool call's arguments as the model sent them) is
 * redacted as the value it encodes: read as text, a command inside it quotes with \", which the
 * text patterns take for a literal character (as the shell does), and would hide only a secret's
 * first word. Undefined when it is not such JSON, or nothing in what it encodes is a secret: the
 * text patterns then read it as before (a key-shaped key, say, is theirs to find).
 */
function redactedJsonText(text: string, extra: readonly string[]): string | undefined {
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(text.length - 1);
  if (!((first === 0x7b && last === 0x7d) || (first === 0x5b && last === 0x5d))) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const redacted = JSON.stringify(redactValue(parsed, undefined, extra));
  return redacted === JSON.stringify(parsed) ? undefined : redacted;
}

/** Headers as a plain object with credentials hidden. */
export function redactHeaders(headers: Headers | Record<string, string>, extraSecrets: readonly string[] = []): Record<string, string> {
  const entries = headers instanceof Headers ? [...headers.entries()] : Object.entries(headers);
  return Object.fromEntries(
    entries.map(([k, v]) => [k, SECRET_NAME.test(k) ? REDACTED : (redactValue(v, undefined, extraSecrets) as string)]),
  );
}
