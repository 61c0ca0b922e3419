import type { Database } from "bun:sqlite";
import type { Logger } from "../core/log/index.ts";
import type { CheckConfig, WatchdogConfig } from "../core/config/sections/watchdogConfig.ts";
import { runCommand } from "../core/process/index.ts";
import { Redactor } from "../core/redaction/index.ts";
import type { Tracer } from "../telemetry/index.ts";
import { ActionJobs } from "./actionJobs.ts";
import { ActionExecutor, type WorkerControl } from "./actions/actionExecutor.ts";
import { AlertSink } from "./actions/alertSink.ts";
import { CommandApprovals } from "./actions/commandApprovals.ts";
import type { ServedModels } from "./actions/providerAlternatives.ts";
import type { ProxyAdmin } from "./actions/proxyAdmin.ts";
import { BUILTIN_SIGNATURES } from "./checks/signatureCatalog.ts";
import { SignatureMatcher } from "./checks/signatureMatcher.ts";
import type { IncidentScope } from "./decide/actionScope.ts";
import { DEFAULT_RULES } from "./decide/defaultRules.ts";
import { PatternMemory } from "./decide/patternMemory.ts";
import { RuleEngine, toRule } from "./decide/ruleEngine.ts";
import { Tier3Advisor } from "./decide/tier3Advisor.ts";
import type { DiagnosticRunner } from "./decide/tier3Investigation.ts";
import { DecisionQueue } from "./decisionQueue.ts";
import { Escalation } from "./escalation.ts";
import type { HealthView } from "./healthView.ts";
import { readHostFacts } from "./hostFacts.ts";
import { IncidentStore } from "./incidents/incidentStore.ts";
import { SilenceStore } from "./incidents/silenceStore.ts";
import type { TrackedIncident } from "./incidents/trackedIncident.ts";
import { IncidentTracker } from "./incidentTracker.ts";
import { IncidentVerifier } from "./incidentVerifier.ts";
import type { WatchdogTracing } from "./watchdogTracing.ts";

export interface WatchdogDeps {
  config: WatchdogConfig;
  db: Database;
  log: Logger;
  worker: WorkerControl;
  proxy: ProxyAdmin;
  /** Whether the worker is up and its probes pass. */
  health: () => HealthView;
  /** The debounced state of a configured check, for incidents about it. */
  checkFailing?: (name: string) => boolean;
  /** A configured check ran after `since` and passes: what verifies an action on its incident. */
  checkPassedSince?: (name: string, since: number) => boolean;
  /** Secrets agentd holds (provider keys, the model key): redacted wherever they would appear. */
  secrets?: Iterable<string | undefined>;
  now?: () => number;
  /** Signals waiting to be decided beyond this many are dropped and counted (default 1000). */
  queueMax?: number;
  /** Actions and their verifications become spans; off unless telemetry is configured. */
  tracer?: Tracer;
  /** The configured providers and the models each serves: a switch away from a model's only provider is skipped. */
  providers?: readonly ServedModels[];
  /** Runs tier 3's read-only diagnostics; by default confined, as the command user. */
  diagnose?: DiagnosticRunner;
}

/** Tier 3's diagnostics run as the agent's commands do: as the command user, no_new_privs, no secrets. */
const runDiagnostic: DiagnosticRunner = (argv, timeoutMs) => runCommand({ argv, timeoutMs, maxOutputBytes: 4096, confined: true });

/** The check an incident is about (`check:<name>`), or the one that verifies its signature. */
function checkOfIncident(config: WatchdogConfig, tracked: TrackedIncident): CheckConfig | undefined {
  const named = tracked.fingerprint.startsWith("check:") ? tracked.fingerprint.slice("check:".length) : undefined;
  const verifying = config.signatures.find((s) => tracked.signals.has(s.id) && s.verify_check)?.verify_check;
  return config.checks.find((c) => c.name === (named ?? verifying));
}

const QUEUE_MAX = 1000;

/** What the watchdog's decisions call back into: its recent lines, an incident's scope, escalating past a failed tier. */
export interface WatchdogHooks {
  recentLines: () => readonly string[];
  scope: (tracked: TrackedIncident) => IncidentScope;
  escalate: (tracked: TrackedIncident, fromTier: number, failedAction?: string) => Promise<void> | undefined;
}

/**
 * The watchdog's collaborators, built from its config and wired to each other: stores, matcher,
 * rules, tiers, actions, tracker and verifier. The decisions themselves are the Watchdog's.
 */
export function composeWatchdog(deps: WatchdogDeps, now: () => number, tracing: WatchdogTracing, hooks: WatchdogHooks) {
  const { config, db, log } = deps;
  const store = new IncidentStore(db);
  const memory = new PatternMemory(db);
  const alerts = new AlertSink(store, log, config.webhook, now);
  const approvals = new CommandApprovals(store, alerts, log, config, now);
  const redactor = new Redactor([config.tier3.api_key, ...Object.values(config.webhook?.headers ?? {}), ...(deps.secrets ?? [])]);
  const advisor = new Tier3Advisor(db, config.tier3, Object.keys(config.commands), deps.diagnose ?? runDiagnostic, (text) =>
    redactor.redact(text),
  );
  const tracker = new IncidentTracker({ config, db, log, store, approvals });
  const rules = [...config.rules, ...(config.default_rules ? DEFAULT_RULES : [])].map(toRule);
  return {
    store,
    silences: new SilenceStore(db),
    memory,
    matcher: new SignatureMatcher([...config.signatures, ...BUILTIN_SIGNATURES]),
    alerts,
    approvals,
    redactor,
    tracker,
    rules: new RuleEngine(rules, config.rule_reset_s * 1000),
    executor: new ActionExecutor(config, deps.worker, deps.proxy, alerts, () => deps.providers),
    /** Ids of configured signatures: their signals are about watched services, never agentd's worker. */
    configuredSignatures: new Set(config.signatures.map((s) => s.id)) as ReadonlySet<string>,
    escalation: new Escalation({
      config,
      store,
      memory,
      advisor,
      redactor,
      health: deps.health,
      recentLines: hooks.recentLines,
      scope: hooks.scope,
      checkOf: (tracked) => checkOfIncident(config, tracked),
      hostFacts: () => readHostFacts(),
      now,
    }),
    queue: new DecisionQueue({ max: deps.queueMax ?? QUEUE_MAX, log }),
    jobs: new ActionJobs((incidentId, error) => log.error("watchdog.error", { incident_id: incidentId, error })),
    verifier: new IncidentVerifier({
      config,
      log,
      store,
      memory,
      alerts,
      tracker,
      healthy: () => deps.health().ok,
      checkFailing: (name) => deps.checkFailing?.(name) ?? false,
      checkPassedSince: (name, since) => deps.checkPassedSince?.(name, since) ?? false,
      forgetAnswer: (key) => advisor.forgetAnswer(key),
      escalate: hooks.escalate,
      tracing,
      now,
    }),
  };
}
