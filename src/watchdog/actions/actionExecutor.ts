import { runCommand } from "../../core/process/index.ts";
import { errorMessage } from "../../core/errors/index.ts";
import type { AlertSink } from "./alertSink.ts";
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

  async #runCommand(name: string | undefined, approved: boolean): Promise<ActionResult> {
    const command = name ? this.config.commands[name] : undefined;
    if (!name || !command)
      return { ok: false, detail: `run_command names no configured command${name ? ` (${name} is not under watchdog.commands)` : ""}` };
    if (!command.pre_approved && !approved)
      return {
        ok: false,
        detail: `command ${name} needs service_control approval (a person allows it, or pre_approved in watchdog.commands.${name})`,
      };
    const result = await runCommand({ argv: command.argv, timeoutMs: command.timeout_ms, maxOutputBytes: 2048 });
    if (result.exit_code === 0) return { ok: true, detail: `${name}: exit 0` };
    const how = result.timed_out
      ? `timed out after ${command.timeout_ms} ms`
      : result.signal
        ? `ended by ${result.signal}`
        : `exit ${result.exit_code}`;
    return { ok: false, detail: `${name}: ${how} ${result.output.trim().slice(-200)}`.trimEnd() };
  }
}
