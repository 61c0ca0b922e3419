import type { ActionName } from "../../core/config/sections/watchdogConfig.ts";
import { isMetaSignal } from "./patternMemory.ts";

/** What an incident is about, as far as the actions it may take are concerned. */
export interface IncidentScope {
  /** The incident's component: `worker`, `check:db`, `provider:openai`, `log:/var/log/app.log`. */
  component: string;
  /** Every signal is agentd's own and names its worker: only then may the worker be restarted. */
  ownWorker: boolean;
}

/** Signals about the worker that do not carry the `worker` component: its memory check. */
const WORKER_CHECK_SIGNALS = new Set(["check.memory"]);

/**
 * Whether an incident is about agentd's own worker. Signals from configured signatures describe
 * watched services (whatever component they name), so one of them is enough to say no: a service's
 * log line must never be able to restart agentd.
 */
export function scopeOf(component: string, signalIds: readonly string[], configuredSignatures: ReadonlySet<string>): IncidentScope {
  const own = signalIds.length > 0 && signalIds.every((id) => !configuredSignatures.has(id));
  const substantive = signalIds.filter((id) => !isMetaSignal(id));
  const aboutWorker = component === "worker" || (substantive.length > 0 && substantive.every((id) => WORKER_CHECK_SIGNALS.has(id)));
  return { component, ownWorker: own && aboutWorker };
}

/** Why an action does not fit an incident, or undefined when it does. */
export function outOfScope(action: ActionName, scope: IncidentScope): string | undefined {
  if (action === "restart_worker" && !scope.ownWorker)
    return `restart_worker is only for incidents about agentd's own worker; this one is about ${scope.component}`;
  return undefined;
}

/** The actions of a list that fit the incident. */
export function actionsInScope(actions: readonly ActionName[], scope: IncidentScope): ActionName[] {
  return actions.filter((action) => outOfScope(action, scope) === undefined);
}
