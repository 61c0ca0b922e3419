/** Short random ids with a prefix saying what they name: ses_…, turn_…, call_…, apr_…. */
export function newId(prefix: "ses" | "turn" | "tc" | "apr"): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `${prefix}_${Buffer.from(bytes).toString("hex")}`;
}
