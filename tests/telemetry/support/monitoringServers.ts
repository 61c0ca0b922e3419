import type { Subprocess } from "bun";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { stopChild } from "../../support/binary.ts";
import { GiveUp, waitFor } from "../../support/waitFor.ts";

/** A loopback port nothing listens on right now (the servers below take a port on their command line). */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** A Debian monitoring server started by a test on loopback, its output kept for failure messages. */
export interface MonitoringServer {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  output(): string;
  /** SIGTERM (SIGKILL past the grace) to this server's PID. */
  stop(): Promise<void>;
}

async function startServer(argv: string[], url: string, readyPath: string): Promise<MonitoringServer> {
  const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let output = "";
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  };
  void collect(proc.stdout);
  void collect(proc.stderr);
  const server: MonitoringServer = { proc, url, output: () => output, stop: () => stopChild(proc, 10_000) };
  try {
    await waitFor(
      `${argv[0]} to answer ${readyPath}`,
      async () => {
        if (proc.exitCode !== null) throw new GiveUp(`${argv[0]} exited ${proc.exitCode}: ${output}`);
        return (await fetch(`${url}${readyPath}`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined))?.ok;
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
  } catch (error) {
    await server.stop();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return server;
}

/** Debian's prometheus, scraping `targets` (host:port) as job "agentd" every second, with agentd's shipped rules loaded. */
export function startPrometheus(dir: string, targets: string[], ruleFile: string): Promise<MonitoringServer> {
  const port = freePort();
  mkdirSync(join(dir, "tsdb"), { recursive: true });
  const config = join(dir, "prometheus.yml");
  writeFileSync(
    config,
    [
      "global:",
      "  scrape_interval: 1s",
      "  evaluation_interval: 1s",
      "rule_files:",
      `  - ${JSON.stringify(ruleFile)}`,
      "scrape_configs:",
      "  - job_name: agentd",
      "    static_configs:",
      `      - targets: ${JSON.stringify(targets)}`,
      "",
    ].join("\n"),
  );
  return startServer(
    [
      "/usr/bin/prometheus",
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, "tsdb")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    `http://127.0.0.1:${port}`,
    "/-/ready",
  );
}

/**
 * Debian's prometheus-alertmanager, alone (no cluster), notifying `webhookUrl` of firing and resolved
 * alerts at once, and again every `repeatInterval` while they fire.
 */
export function startAlertmanager(dir: string, webhookUrl: string, port = freePort(), repeatInterval = "1h"): Promise<MonitoringServer> {
  mkdirSync(join(dir, "am-data"), { recursive: true });
  const config = join(dir, "alertmanager.yml");
  writeFileSync(
    config,
    [
      "route:",
      "  receiver: test",
      "  group_by: [alertname, incident]",
      "  group_wait: 0s",
      "  group_interval: 1s",
      `  repeat_interval: ${repeatInterval}`,
      "receivers:",
      "  - name: test",
      "    webhook_configs:",
      `      - url: ${JSON.stringify(webhookUrl)}`,
      "        send_resolved: true",
      "",
    ].join("\n"),
  );
  return startServer(
    [
      "/usr/bin/prometheus-alertmanager",
      `--config.file=${config}`,
      `--storage.path=${join(dir, "am-data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
    ],
    `http://127.0.0.1:${port}`,
    "/-/ready",
  );
}

/** Runs promtool with `args`; resolves with its exit code and output. */
export async function promtool(args: string[], stdin?: string, cwd?: string): Promise<{ code: number; output: string }> {
  const proc = Bun.spawn(["/usr/bin/promtool", ...args], {
    cwd,
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code, output: out + err };
}
