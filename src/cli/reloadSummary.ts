export interface ReloadAnswer {
  result: "reloaded" | "failed";
  problem?: string;
  /** Changed keys the running agentd now follows. */
  applied?: string[];
  /** Changed keys only a restart of agentd applies. */
  needs_restart?: string[];
}

/** What `agentd reload` prints after a good reload: what changed, what was applied, what waits for a restart. */
export function describeReload(url: string, answer: ReloadAnswer): string {
  const applied = answer.applied ?? [];
  const restart = answer.needs_restart ?? [];
  if (applied.length + restart.length === 0) return `agentd at ${url} reloaded its config: no setting changed\n`;
  const count = applied.length + restart.length;
  const lines = [`agentd at ${url} reloaded its config: ${count} setting${count === 1 ? "" : "s"} changed`];
  if (applied.length) lines.push(`  applied:`, ...applied.map((key) => `    ${key}`));
  if (restart.length)
    lines.push(`  needs a restart of agentd to apply (until then the old value stays in force):`, ...restart.map((key) => `    ${key}`));
  return `${lines.join("\n")}\n`;
}
