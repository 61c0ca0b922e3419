import type { ActionName, RuleConfig } from "../../core/config/sections/watchdogConfig.ts";

export interface Rule {
  id: string;
  signal: string;
  count: number;
  windowMs: number;
  action: ActionName;
  command?: string;
  cooldownsMs: number[];
}

export type RuleVerdict =
  | { kind: "none" }
  | { kind: "waiting"; rule: Rule; seen: number }
  | { kind: "cooldown"; rule: Rule; untilMs: number }
  | { kind: "fire"; rule: Rule; action: ActionName; firing: number; alertOnly: boolean };

interface FiringState {
  firings: number;
  lastAt: number;
}

export function toRule(config: RuleConfig, index: number): Rule {
  return {
    id: config.id ?? `rule-${index + 1}-${config.when.signal}`,
    signal: config.when.signal,
    count: config.when.count,
    windowMs: config.when.window_s * 1000,
    action: config.do,
    command: config.command,
    cooldownsMs: config.cooldown_s.map((s) => s * 1000),
  };
}

/**
 * Tier 1: `signal (+count within window) → action`, per component. A rule that fires again waits
 * a growing cooldown (30 s → 60 s → 300 s by default), and past its last cooldown only alerts,
 * until it has stayed quiet for the reset period. Pure: time is passed in.
 */
export class RuleEngine {
  readonly #bySignal = new Map<string, Rule[]>();
  readonly #seen = new Map<string, number[]>();
  readonly #firings = new Map<string, FiringState>();

  constructor(
    rules: readonly Rule[],
    private readonly resetMs: number,
  ) {
    for (const rule of rules) {
      const list = this.#bySignal.get(rule.signal) ?? [];
      list.push(rule);
      this.#bySignal.set(rule.signal, list);
    }
  }

  hasRuleFor(signalId: string): boolean {
    return this.#bySignal.has(signalId);
  }

  /** Counts the signal and says whether a rule fires now. */
  observe(signalId: string, component: string, now: number): RuleVerdict {
    const rules = this.#bySignal.get(signalId);
    if (!rules) return { kind: "none" };
    const key = `${signalId}|${component}`;
    const maxWindow = Math.max(...rules.map((r) => r.windowMs));
    const seen = (this.#seen.get(key) ?? []).filter((t) => now - t < maxWindow);
    seen.push(now);
    this.#seen.set(key, seen);
    let waiting: RuleVerdict = { kind: "none" };
    for (const rule of rules) {
      const inWindow = seen.filter((t) => now - t < rule.windowMs).length;
      if (inWindow < rule.count) {
        waiting = { kind: "waiting", rule, seen: inWindow };
        continue;
      }
      return this.#fire(rule, component, now);
    }
    return waiting;
  }

  #fire(rule: Rule, component: string, now: number): RuleVerdict {
    const key = `${rule.id}|${component}`;
    const state = this.#firings.get(key);
    if (state) {
      const cooldowns = rule.cooldownsMs;
      const cooldown = cooldowns.length === 0 ? 0 : cooldowns[Math.min(state.firings, cooldowns.length) - 1]!;
      if (now - state.lastAt < cooldown) return { kind: "cooldown", rule, untilMs: state.lastAt + cooldown };
      if (now - state.lastAt >= this.resetMs) state.firings = 0;
    }
    const firings = (state?.firings ?? 0) + 1;
    this.#firings.set(key, { firings, lastAt: now });
    // The window starts afresh: the same burst must not fire the rule twice.
    this.#seen.delete(`${rule.signal}|${component}`);
    const alertOnly = rule.cooldownsMs.length > 0 && firings > rule.cooldownsMs.length;
    return { kind: "fire", rule, action: alertOnly ? "alert" : rule.action, firing: firings, alertOnly };
  }
}
