import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { Client } from "ssh2";
import { FallbackClient } from "../../src/hop/fallbackClient.ts";
import { HopError } from "../../src/hop/hopErrors.ts";
import { startSshd, type TestSshd } from "../support/sshd.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// The fallback's exec channels against a real OpenSSH server, with the client as slow to read as on a loaded box.

let server: TestSshd;
let home: string;
let ssh: Client;
let stallAfterExec = false;

beforeAll(async () => {
  home = makeTempDir("agentd-fallback-home-");
  server = await startSshd({ env: { HOME: home } });
  ssh = new Client();
  await new Promise<void>((resolve, reject) => {
    ssh.once("ready", resolve).once("error", reject);
    ssh.connect({
      host: server.host,
      port: server.port,
      username: server.user,
      privateKey: readFileSync(server.clientKeyPath),
      // Called just before each packet is sent: after the exec request has gone out, the event loop stalls, so
      // sshd's whole answer (success, output, exit status, EOF, close) waits in the socket and is read at once.
      debug: (line) => {
        if (stallAfterExec && line.includes("CHANNEL_REQUEST") && line.includes("exec:")) queueMicrotask(() => Bun.sleepSync(1500));
      },
    });
  });
}, 60_000);

afterAll(async () => {
  ssh?.end();
  await server?.stop();
  removeTempDirs();
});

test("a short command's exit code is kept when its reply, output and exit arrive in one read", async () => {
  const client = new FallbackClient("fb", { ssh: () => ssh, unavailable: () => new HopError("hop_disconnected", "down"), home });
  stallAfterExec = true;
  try {
    const result = await client.exec({ cmd: "echo stalled; exit 3", yield_time_ms: 5000 });
    expect(result.output).toContain("stalled");
    expect(result.running).toBe(false);
    expect(result.exit_code).toBe(3);
  } finally {
    stallAfterExec = false;
  }
}, 30_000);
