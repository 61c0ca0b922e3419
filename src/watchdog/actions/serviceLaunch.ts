import { existsSync, readFileSync } from "node:fs";

/** What decides where a watchdog command starts. */
export interface LaunchHost {
  /** systemd is PID 1 (`/run/systemd/system` exists): it can hold a process outside agentd's unit. */
  systemd: boolean;
  /** Only root may ask the system manager for a scope of its own. */
  root: boolean;
}

export function detectLaunchHost(): LaunchHost {
  let init = "";
  try {
    init = readFileSync("/proc/1/comm", "utf8").trim();
  } catch {
    // /proc hidden: not systemd as far as agentd can tell.
  }
  return { systemd: init === "systemd" && existsSync("/run/systemd/system"), root: process.getuid?.() === 0 };
}

/** systemctl already asks PID 1 to start the service in a unit of its own. */
const SYSTEMD_CLIENTS = new Set(["systemctl", "/bin/systemctl", "/usr/bin/systemctl", "systemd-run", "/usr/bin/systemd-run"]);

/**
 * The argv that runs a configured watchdog command (a service restart) so that what it starts
 * outlives agentd: under systemd, in a transient scope of its own, outside agentd's cgroup, which
 * `systemctl stop agentd` (KillMode=mixed) would otherwise kill whole; elsewhere as written, in the
 * session of its own runCommand starts every command in, which agentd's stop never signals.
 */
export function launchArgv(argv: readonly string[], name: string, host: LaunchHost, now: number): string[] {
  if (!host.systemd || !host.root || SYSTEMD_CLIENTS.has(argv[0] ?? "")) return [...argv];
  const unit = `agentd-action-${name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 60)}-${now.toString(36)}`;
  return ["systemd-run", "--scope", "--quiet", "--collect", `--unit=${unit}`, "--", ...argv];
}
