/** Short random ids with a prefix saying what they name: ses_…, turn_…, call_…, apr_…, mcp_… (a client's direct call). */
export function newId(prefix: "ses" | "turn" | "tc" | "apr" | "mcp"): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `${prefix}_${Buffer.from(bytes).toString("hex")}`;
}
