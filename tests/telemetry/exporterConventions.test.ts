import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { readReadyFile } from "../../src/daemon/readyFile.ts";
import { promtool } from "./support/monitoringServers.ts";
import pkg from "../../package.json" with { type: "json" };

// The compiled ./agentd's /metrics against what the kernel says of its worker process: the
// process_* families of the Prometheus client libraries, a start time, the build, counters at 0
// before their first event, and when each check last ran.

let daemon: DaemonProcess;
let launchedAt: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  await ensureBinary();
  launchedAt = Date.now() / 1000;
  daemon = await startDaemon({
    dataDir: makeTempDir("agentd-exporter-"),
    env: { AGENTD_BUILD_COMMIT: "0123abc" },
    config: {
      watchdog: {
        tick_ms: 100,
        checks: [
          { type: "command", name: "always-ok", argv: ["true"], interval_s: 0.2, severity: "warning" },
          { type: "command", name: "never-ok", argv: ["false"], interval_s: 0.2, failure_threshold: 1, severity: "critical" },
        ],
      },
    },
  });
}, 120_000);

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await daemon?.stop();
  removeTempDirs();
}, 60_000);

const metrics = async () => (await fetch(`${daemon.url}/metrics`)).text();

/** The value of the one sample `series` (name with its labels, as written) in `text`. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  if (!line) throw new Error(`no sample ${series} in /metrics`);
  return Number(line.slice(series.length + 1));
}

/** When process `pid` started, from /proc: its start in clock ticks after boot (CLK_TCK is 100 on Linux). */
function kernelStartSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const btime = Number(/^btime (\d+)$/m.exec(readFileSync("/proc/stat", "utf8"))![1]);
  return btime + Number(fields[19]) / 100;
}

describe("/metrics follows the Prometheus exporter conventions", () => {
  test("promtool accepts the whole text, and each family new here is typed as the conventions say", async () => {
    const text = await waitFor("both checks run", async () => {
      const body = await metrics();
      return body.includes('check="always-ok"} ') && body.includes('check="never-ok"} ') ? body : undefined;
    });
    const checked = await promtool(["check", "metrics"], text);
    expect(checked.output).toBe("");
    expect(checked.code).toBe(0);
    for (const [family, type] of [
      ["process_resident_memory_bytes", "gauge"],
      ["process_cpu_seconds_total", "counter"],
      ["process_start_time_seconds", "gauge"],
      ["process_open_fds", "gauge"],
      ["process_max_fds", "gauge"],
      ["agentd_start_time_seconds", "gauge"],
      ["agentd_build_info", "gauge"],
      ["agentd_watchdog_check_last_run_timestamp_seconds", "gauge"],
    ])
      expect(text).toContain(`# TYPE ${family} ${type}\n`);
  });

  test("process_* and the start times are the worker's own, as /proc and ready.json tell them", async () => {
    const pid = daemon.workerPid();
    const ready = readReadyFile(daemon.dataDir)!;
    expect(ready.pid).toBe(pid);
    const text = await metrics();
    const started = Date.parse(ready.started_at) / 1000;
    expect(sample(text, "agentd_start_time_seconds")).toBe(started);
    // The process began before its worker code stamped started_at, and no earlier than the kernel saw it start (a tick is 10 ms).
    const processStart = sample(text, "process_start_time_seconds");
    expect(processStart).toBeGreaterThanOrEqual(kernelStartSeconds(pid) - 0.01);
    expect(processStart).toBeLessThanOrEqual(started);
    const limits = readFileSync(`/proc/${pid}/limits`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("Max open files"))!;
    expect(sample(text, "process_max_fds")).toBe(Number(limits.slice("Max open files".length).trim().split(/\s+/)[0]));
    const rssKb = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]);
    const rss = sample(text, "process_resident_memory_bytes");
    // Read a moment apart, so the same order of size rather than equal.
    expect(rss / (rssKb * 1024)).toBeGreaterThan(0.5);
    expect(rss / (rssKb * 1024)).toBeLessThan(2);
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(await metrics(), "process_cpu_seconds_total")).toBeGreaterThanOrEqual(sample(text, "process_cpu_seconds_total"));
  });

  test("process_open_fds counts the connections the worker holds", async () => {
    const before = sample(await metrics(), "process_open_fds");
    const port = Number(new URL(daemon.url).port);
    for (let i = 0; i < 25; i++) {
      const socket = connect({ host: "127.0.0.1", port });
      await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject));
      sockets.push(socket);
    }
    await waitFor("the 25 connections among the worker's open fds", async () =>
      sample(await metrics(), "process_open_fds") >= before + 25 ? true : undefined,
    );
  });

  test("agentd_build_info names the version, the Bun that built it and the commit it was given", async () => {
    expect(await metrics()).toContain(`agentd_build_info{version="${pkg.version}",bun_version="${Bun.version}",commit="0123abc"} 1\n`);
  });

  test("labelled counters are at 0 before their first event", async () => {
    const text = await metrics();
    for (const reason of ["stop", "error", "cancelled", "interrupted", "max_steps", "repeated_call"])
      expect(text).toContain(`agentd_agent_turns_total{reason="${reason}"} 0\n`);
    expect(text).toContain("agentd_watchdog_alertmanager_posts_failed_total 0\n");
  });

  test("each check's last run time moves on with its runs, and its state keeps its severity", async () => {
    const first = await metrics();
    const ran = sample(first, 'agentd_watchdog_check_last_run_timestamp_seconds{check="always-ok"}');
    expect(ran).toBeGreaterThanOrEqual(launchedAt);
    expect(ran).toBeLessThanOrEqual(Date.now() / 1000);
    await waitFor("a later run of always-ok and never-ok", async () => {
      const text = await metrics();
      return sample(text, 'agentd_watchdog_check_last_run_timestamp_seconds{check="always-ok"}') > ran &&
        sample(text, 'agentd_watchdog_check_last_run_timestamp_seconds{check="never-ok"}') > ran
        ? true
        : undefined;
    });
    const text = await waitFor("never-ok failing", async () => {
      const body = await metrics();
      return body.includes('agentd_watchdog_check_state{check="never-ok",kind="command",severity="critical",state="fail"} 1')
        ? body
        : undefined;
    });
    expect(text).toContain('agentd_watchdog_check_state{check="always-ok",kind="command",severity="warning",state="pass"} 1');
  });
});
