const PATTERNS: Array<[RegExp, string]> = [
  [/\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}/g, "$1-[REDACTED]"],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [REDACTED]"],
  [/("?(?:api[_-]?key|authorization|x-api-key|token|secret|password|passwd)"?\s*[:=]\s*"?)([^"\s,}&]+)/gi, "$1[REDACTED]"],
  [/\b(gh[pousr]_[A-Za-z0-9]{16,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16})\b/g, "[REDACTED]"],
];

/**
 * Removes secrets from text before it is stored on an incident or sent to a model: known key
 * shapes, credentials in key=value or JSON form, and the exact secrets agentd itself holds.
 */
export class Redactor {
  readonly #known: string[];

  constructor(knownSecrets: Iterable<string | undefined> = []) {
    this.#known = [...knownSecrets].filter((s): s is string => typeof s === "string" && s.length >= 6).sort((a, b) => b.length - a.length);
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.#known) out = out.split(secret).join("[REDACTED]");
    for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
    return out;
  }
}
