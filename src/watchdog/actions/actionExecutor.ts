import { runCommand } from "../../core/process/index.ts";
import { errorMessage } from "../../core/errors/index.ts";
import type { AlertSink } from "./alertSink.ts";
import { detectLaunchHost, launchArgv, type LaunchHost } from "./serviceLaunch.ts";
import { failoverTargets, type ServedModels } from "./providerAlternatives.ts";
import type { ProviderTimeout, ProxyAdmin } from "./proxyAdmin.ts";
import type { Signal } from "../checks/signal.ts";
import { outOfScope, type IncidentScope } from "../decide/actionScope.ts";
import type { ActionName, WatchdogConfig } from "../../core/config/sections/watchdogConfig.ts";

export interface ActionTarget {
  incidentId: number;
  title: string;
  severity: string;
  component: string;
  /** What the incident is about: an action beyond it is refused, whichever tier chose it. */
  scope: IncidentScope;
  /** The latest signal of each kind in the incident. */
  signals: Signal[];
  reason: string;
  command?: string;
  /** A person allowed this run_command (an approved action request). */
  approved?: boolean;
}

export interface ActionResult {
  ok: boolean;
  detail: string;
  /** The action was not carried out because it would do harm here: nothing to verify or learn. */
  skipped?: boolean;
}

export interface WorkerControl {
  /**
   * SIGTERM, then SIGKILL after the grace period; the supervisor starts a new worker. `pid` is the
   * worker the signals were about: a decision that arrives after that worker was replaced must not
   * restart its healthy successor.
   */
  restartWorker(reason: string, pid?: number): Promise<string>;
}

const TIMEOUT_BY_CAUSE: Record<string, ProviderTimeout> = {
  connect_timeout: "connect_ms",
  first_byte_timeout: "first_byte_ms",
  idle_timeout: "idle_ms",
  total_timeout: "total_ms",
};

/** The provider an incident is about: its component (`provider:<name>`) or a signal's field. */
function providerOf(target: Pick<ActionTarget, "component" | "signals">): string | undefined {
  if (target.component.startsWith("provider:") && target.component !== "provider:unknown")
    return target.component.slice("provider:".length);
  const named = target.signals.find((s) => typeof s.fields.provider === "string");
  return named?.fields.provider as string | undefined;
}

/** The model of a model-scoped incident (`model:<model>@<provider>`): a switch there moves that model only. */
function switchedModel(target: Pick<ActionTarget, "component" | "signals">): string | undefined {
  if (!target.component.startsWith("model:")) return undefined;
  return target.signals.map((s) => s.fields.model).find((m): m is string => typeof m === "string" && m.length > 0);
}

/**
 * Carries out one action. Never destructive on its own: a command needs pre-approval in config or a
 * person's allow, and an action must fit the incident's component (see actionScope).
 */
export class ActionExecutor {
  constructor(
    private readonly config: WatchdogConfig,
    private readonly worker: WorkerControl,
    private readonly proxy: ProxyAdmin,
    private readonly alerts: AlertSink,
    /** The configured providers and their models; undefined when not known (then switches are not second-guessed). */
    private readonly providers: () => readonly ServedModels[] | undefined = () => undefined,
    /** Where a command may start what must outlive agentd (a restarted service). */
    private readonly launchHost: LaunchHost = detectLaunchHost(),
  ) {}

  async execute(action: ActionName, target: ActionTarget): Promise<ActionResult> {
    try {
      return await this.#run(action, target);
    } catch (error) {
      return { ok: false, detail: errorMessage(error) };
    }
  }

  async #run(action: ActionName, target: ActionTarget): Promise<ActionResult> {
    const { limits } = this.config;
    const beyond = outOfScope(action, target.scope);
    if (beyond) return { ok: false, detail: beyond };
    switch (action) {
      case "restart_worker": {
        // The newest signal names the worker the decision is about.
        const pid = [...target.signals]
          .sort((a, b) => b.ts - a.ts)
          .map((signal) => signal.fields.pid)
          .find((value): value is number => typeof value === "number");
        return { ok: true, detail: await this.worker.restartWorker(target.reason, pid) };
      }
      case "open_breaker":
      case "switch_provider": {
        const provider = providerOf(target);
        if (!provider) return { ok: false, detail: `${action} needs a provider and the incident names none` };
        const model = action === "switch_provider" ? switchedModel(target) : undefined;
        const alone = action === "switch_provider" ? this.#noFailover(provider, target, model !== undefined) : undefined;
        if (alone) return { ok: true, skipped: true, detail: alone };
        if (model !== undefined)
          return { ok: true, detail: await this.proxy.switchModel(provider, model, limits.breaker_open_ms, target.reason) };
        const detail =
          action === "open_breaker"
            ? await this.proxy.openBreaker(provider, limits.breaker_open_ms, target.reason)
            : await this.proxy.switchProvider(provider, limits.breaker_open_ms, target.reason);
        return { ok: true, detail };
      }
      case "raise_timeout": {
        const provider = providerOf(target);
        if (!provider) return { ok: false, detail: "raise_timeout needs a provider and the incident names none" };
        const cause = target.signals.map((s) => s.fields.cause).find((c): c is string => typeof c === "string" && c in TIMEOUT_BY_CAUSE);
        const timeout = cause ? TIMEOUT_BY_CAUSE[cause]! : "first_byte_ms";
        return {
          ok: true,
          detail: await this.proxy.raiseTimeout(provider, timeout, limits.raise_timeout_factor, limits.raise_timeout_max_ms, target.reason),
        };
      }
      case "run_command":
        return this.#runCommand(target.command, target.approved ?? false);
      case "alert":
        await this.alerts.alert({ incidentId: target.incidentId, title: target.title, severity: target.severity, message: target.reason });
        return { ok: true, detail: "alerted" };
      case "ignore":
        return { ok: true, detail: "recorded only" };
    }
  }

  /**
   * Switching away from the only provider of a model fails every request for it with 503 for the
   * whole switch instead of the upstream's own short 429s, and a switch for one model only would
   * change nothing: then the switch is skipped.
   */
  #noFailover(provider: string, target: ActionTarget, modelOnly: boolean): string | undefined {
    const providers = this.providers();
    if (providers === undefined) return undefined;
    const model = target.signals.map((s) => s.fields.model).find((m): m is string => typeof m === "string" && m.length > 0);
    if (failoverTargets(providers, provider, model).length > 0) return undefined;
    if (modelOnly) return `switch_provider skipped: no other provider serves model ${model}; there is nothing to fail over to`;
    return `switch_provider skipped: no other provider serves ${model ? `model ${model}` : "its models"}; switching ${provider} away would answer 503 for ${Math.round(this.config.limits.breaker_open_ms / 1000)} s instead of the upstream's own rate limit`;
  }

  async #runCommand(name: string | undefined, approved: boolean): Promise<ActionResult> {
    const command = name ? this.config.commands[name] : undefined;
    if (!name || !command)
      return { ok: false, detail: `run_command names no configured command${name ? ` (${name} is not under watchdog.commands)` : ""}` };
    if (!command.pre_approved && !approved)
      return {
        ok: false,
        detail: `command ${name} needs service_control approval (a person allows it, or pre_approved in watchdog.commands.${name})`,
      };
    const argv = launchArgv(command.argv, name, this.launchHost, Date.now());
    const result = await runCommand({ argv, timeoutMs: command.timeout_ms, maxOutputBytes: 2048 });
    if (result.exit_code === 0) return { ok: true, detail: `${name}: exit 0` };
    const how = result.timed_out
      ? `timed out after ${command.timeout_ms} ms`
      : result.signal
        ? `ended by ${result.signal}`
        : `exit ${result.exit_code}`;
    return { ok: false, detail: `${name}: ${how} ${result.output.trim().slice(-200)}`.trimEnd() };
  }
}
