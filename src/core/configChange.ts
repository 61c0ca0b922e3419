import type { AgentdConfig } from "./config/index.ts";

/** What a capability did with a reloaded config: the changed keys it applied, and those that need a restart. */
export interface ReloadReport {
  applied: string[];
  needsRestart: string[];
}

/**
 * The dotted keys whose values differ between two configs: objects are walked, anything else
 * (numbers, strings, lists such as `providers`) is one key compared whole. A key present on one
 * side only (an optional setting added or removed) is a change too.
 */
export function changedKeys(before: unknown, after: unknown, prefix = ""): string[] {
  if (isPlainObject(before) && isPlainObject(after)) {
    const names = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return names.flatMap((name) => changedKeys(before[name], after[name], prefix ? `${prefix}.${name}` : name));
  }
  return JSON.stringify(before) === JSON.stringify(after) ? [] : [prefix];
}

/** The value a dotted key names in a config (undefined when absent). */
export function valueAt(config: unknown, key: string): unknown {
  let value = config;
  for (const name of key.split(".")) value = isPlainObject(value) ? value[name] : undefined;
  return value;
}

/** A key is under a prefix when it is the prefix or one of its children (`pty.limits` holds `pty.limits.pids_max`). */
export function keyUnder(key: string, prefix: string): boolean {
  return key === prefix || key.startsWith(`${prefix}.`);
}

/** The change a reload brings, as each capability's `reload` receives it. */
export class ConfigChange {
  readonly keys: readonly string[];

  constructor(
    readonly before: AgentdConfig,
    readonly after: AgentdConfig,
  ) {
    // `$schema` only points editors at the schema: it configures nothing.
    this.keys = changedKeys(before, after).filter((key) => key !== "$schema");
  }

  /** Whether anything under these keys changed. */
  touches(...prefixes: string[]): boolean {
    return this.keys.some((key) => prefixes.some((prefix) => keyUnder(key, prefix)));
  }

  /**
   * Sorts the changed keys a capability owns (under `owned`) into applied and needing a restart
   * (under `restartOnly`): the capability applies the rest itself before answering.
   */
  report(owned: readonly string[], restartOnly: readonly string[]): ReloadReport {
    const mine = this.keys.filter((key) => owned.some((prefix) => keyUnder(key, prefix)));
    const restart = (key: string) => restartOnly.some((prefix) => keyUnder(key, prefix) || keyUnder(prefix, key));
    return { applied: mine.filter((key) => !restart(key)), needsRestart: mine.filter(restart) };
  }

  /**
   * The same sorting from the other side, for a capability that applies a fixed list of keys
   * (`live`): any other key it owns, one added to the schema later included, needs a restart.
   */
  reportLive(owned: readonly string[], live: readonly string[]): ReloadReport {
    const mine = this.keys.filter((key) => owned.some((prefix) => keyUnder(key, prefix)));
    const applies = (key: string) => live.some((prefix) => keyUnder(key, prefix));
    return { applied: mine.filter(applies), needsRestart: mine.filter((key) => !applies(key)) };
  }
}

/**
 * Copies a reloaded section into the object a capability reads at each use, every setting but
 * those only a restart applies (named by their keys under `section`); a setting left out of the
 * file goes back to unset.
 */
export function assignLive(target: object, next: object, section: string, restartOnly: readonly string[]): void {
  const into = target as Record<string, unknown>;
  const from = next as Record<string, unknown>;
  const live = (name: string) => !restartOnly.some((prefix) => keyUnder(`${section}.${name}`, prefix));
  for (const name of Object.keys(into)) if (live(name) && !(name in from)) delete into[name];
  for (const [name, value] of Object.entries(from)) if (live(name)) into[name] = structuredClone(value);
}

/**
 * The worker's answer from its capabilities' reports: a key any of them needs a restart for is not
 * applied, and a changed key none of them claimed is named as needing a restart rather than
 * silently called applied. A restart-only key set back to the value agentd started with is in
 * force again, so it counts as applied.
 */
export function combineReports(change: ConfigChange, reports: readonly ReloadReport[], started: AgentdConfig): ReloadReport {
  const needsRestart = new Set(reports.flatMap((report) => report.needsRestart));
  const applied = new Set(reports.flatMap((report) => report.applied).filter((key) => !needsRestart.has(key)));
  for (const key of change.keys) if (!applied.has(key)) needsRestart.add(key);
  for (const key of needsRestart) {
    if (JSON.stringify(valueAt(started, key)) !== JSON.stringify(valueAt(change.after, key))) continue;
    needsRestart.delete(key);
    applied.add(key);
  }
  return { applied: [...applied].sort(), needsRestart: [...needsRestart].sort() };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
