import { describe, expect, test } from "bun:test";
import { launchArgv } from "../../src/watchdog/actions/serviceLaunch.ts";

const now = Date.UTC(2030, 0, 1);

describe("where a watchdog command starts what must outlive agentd", () => {
  test("under systemd as root: a transient scope of its own, outside agentd's cgroup", () => {
    expect(launchArgv(["/usr/local/bin/start-svc", "--fast"], "restart svc!", { systemd: true, root: true }, now)).toEqual([
      "systemd-run",
      "--scope",
      "--quiet",
      "--collect",
      `--unit=agentd-action-restart_svc_-${now.toString(36)}`,
      "--",
      "/usr/local/bin/start-svc",
      "--fast",
    ]);
  });

  test("systemctl already starts the service in its own unit: run as written", () => {
    expect(launchArgv(["systemctl", "restart", "nginx"], "r", { systemd: true, root: true }, now)).toEqual([
      "systemctl",
      "restart",
      "nginx",
    ]);
  });

  test("without systemd, or not as root: as written (runCommand gives it a session of its own)", () => {
    expect(launchArgv(["/bin/sh", "-c", "svc &"], "r", { systemd: false, root: true }, now)).toEqual(["/bin/sh", "-c", "svc &"]);
    expect(launchArgv(["/bin/sh", "-c", "svc &"], "r", { systemd: true, root: false }, now)).toEqual(["/bin/sh", "-c", "svc &"]);
  });
});
