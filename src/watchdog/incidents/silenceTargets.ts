import { AgentdError } from "../../core/errors/index.ts";
import { didYouMean } from "../../core/config/didYouMean.ts";
import { BUILTIN_SIGNATURES } from "../checks/signatureCatalog.ts";
import type { CheckRow } from "../checks/checkRow.ts";
import type { Incident } from "./incidentStore.ts";
import type { Silence } from "./silenceStore.ts";

/** Signals the supervisor makes itself, outside the signature catalog. */
const SUPERVISOR_SIGNALS = [
  "worker.crashed",
  "worker.unresponsive",
  "worker.unhealthy",
  "check.flapping",
  "disk.full",
  "store.corrupt",
  "log.unknown_error",
];

/** Components named after something (`provider:openai`): any name after the prefix is taken, as is the bare name. */
const NAMED_COMPONENT = /^(provider|tool|hop|check):.+$/;

export interface SilenceNames {
  checks: () => CheckRow[];
  /** Names the config gives (providers, its own signatures' ids and components), read on each request. */
  configured?: () => readonly string[];
}

/** Every name a silence can cover, as the watchdog matches them (signal id, component, the name after a component's prefix). */
export function knownSilenceTargets(names: SilenceNames): string[] {
  const known = new Set<string>(SUPERVISOR_SIGNALS);
  for (const signature of BUILTIN_SIGNATURES) {
    known.add(signature.id);
    if (!signature.component.includes("{")) known.add(signature.component);
  }
  for (const row of names.checks()) {
    known.add(row.name);
    known.add(`check:${row.name}`);
    known.add(`check.${row.kind}`);
  }
  for (const name of names.configured?.() ?? []) known.add(name);
  return [...known].sort();
}

/** Refuses a silence for a name nothing reports: it would silence nothing, and the operator would believe otherwise. */
export function checkSilenceTarget(target: string, names: SilenceNames): void {
  const trimmed = target.trim();
  if (!trimmed || NAMED_COMPONENT.test(trimmed)) return;
  const known = knownSilenceTargets(names);
  if (known.includes(trimmed)) return;
  const suggestion = didYouMean(trimmed, known);
  throw new AgentdError(
    "invalid_silence",
    `Nothing named "${trimmed}" reports to the watchdog${suggestion ? `; did you mean "${suggestion}"?` : "."} Known names (checks, signal ids, components) include ${known.slice(0, 8).join(", ")}${known.length > 8 ? ", …" : ""}`,
    { param: "target" },
  );
}

/** The names a silence may give to cover a signal: its id, its component and the name after the component's prefix (`web` for `check:web`). */
export function silenceTargetsOf(signalId: string, component: string): string[] {
  const targets = [signalId, component];
  const colon = component.indexOf(":");
  if (colon > 0) targets.push(component.slice(colon + 1));
  return targets;
}

/** The same names for a stored incident: its component and every signal id of its pattern (`http:…` parts are not signals). */
export function incidentSilenceTargets(incident: Pick<Incident, "fingerprint" | "pattern" | "details">): string[] {
  const component = typeof incident.details.component === "string" ? incident.details.component : (incident.fingerprint ?? "");
  const signals = (incident.pattern ?? "").split("+").filter((part) => part && !part.startsWith("http:"));
  return [...new Set(signals.flatMap((id) => silenceTargetsOf(id, component)).concat(silenceTargetsOf(component, component)))].filter(
    Boolean,
  );
}

/** The silence in force that covers an incident, the one lasting longest when several do. Pure. */
export function silenceCovering(
  incident: Pick<Incident, "fingerprint" | "pattern" | "details">,
  active: readonly Silence[],
): Silence | undefined {
  const targets = new Set(incidentSilenceTargets(incident));
  let covering: Silence | undefined;
  for (const silence of active) if (targets.has(silence.target) && (!covering || silence.until > covering.until)) covering = silence;
  return covering;
}
