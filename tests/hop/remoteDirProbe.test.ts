import { afterAll, describe, expect, test } from "bun:test";
import { spawn } from "node:child_process";
import { EventEmitter } from "node:events";
import { join } from "node:path";
import type { Client } from "ssh2";
import { probeRemoteDir } from "../../src/hop/remoteDirProbe.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

/**
 * An ssh2 Client whose exec channel is a local `sh -c` with the given environment: the probe runs
 * in a real shell, as on a remote host, without an SSH server.
 */
function localShell(env: Record<string, string>): Client {
  return {
    exec(command: string, callback: (error: Error | undefined, channel: EventEmitter & { stderr: EventEmitter }) => void) {
      const child = spawn("sh", ["-c", command], { env, stdio: ["ignore", "pipe", "pipe"] });
      const channel = Object.assign(new EventEmitter(), { stderr: new EventEmitter() });
      child.stdout.on("data", (chunk: Buffer) => channel.emit("data", chunk));
      child.stderr.on("data", (chunk: Buffer) => channel.stderr.emit("data", chunk));
      child.on("close", (code) => {
        channel.emit("exit", code);
        channel.emit("close");
      });
      callback(undefined, channel);
    },
  } as unknown as Client;
}

describe("probeRemoteDir", () => {
  test("reports the host and puts the remote agentd's directory below the remote home", async () => {
    const home = makeTempDir("agentd-probe-home-");
    const { facts, remoteDir } = await probeRemoteDir(
      localShell({ HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin" }),
      "~/.agentd",
      30_000,
    );
    expect(facts.home).toBe(home);
    expect(facts.os).toBe("Linux");
    expect(facts.installed).toBeNull();
    expect(remoteDir).toBe(join(home, ".agentd"));
  });

  test("an absolute remote_dir is kept as it is", async () => {
    const home = makeTempDir("agentd-probe-home-");
    const { remoteDir } = await probeRemoteDir(
      localShell({ HOME: home, PATH: process.env.PATH ?? "/usr/bin:/bin" }),
      "/opt/agentd",
      30_000,
    );
    expect(remoteDir).toBe("/opt/agentd");
  });

  test("a host that reports no home directory is hop_remote_command_failed, with the probe's exit code", async () => {
    const probe = probeRemoteDir(localShell({ HOME: "", PATH: process.env.PATH ?? "/usr/bin:/bin" }), "~/.agentd", 30_000);
    await expect(probe).rejects.toMatchObject({
      code: "hop_remote_command_failed",
      message: expect.stringContaining("did not report a home directory (exit 0)"),
    });
  });
});
