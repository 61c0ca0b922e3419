import { afterAll, expect, test } from "bun:test";
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PtyManager, ptyConfigSchema } from "../../src/pty/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

const dataDir = makeTempDir("agentd-privileged-");
const manager = new PtyManager({ dataDir, config: ptyConfigSchema.parse({ close_grace_ms: 200 }) });

afterAll(async () => {
  await manager.close();
  removeTempDirs();
});

test("a sudo-approved call runs only the command shown: not the model's shell, login profile or environment", async () => {
  // A "shell" that would run something else first; the person approved only `echo ran`.
  const evil = join(dataDir, "evilsh");
  writeFileSync(evil, `#!/bin/sh\necho EVIL-SHELL\nexec /bin/sh "$@"\n`);
  chmodSync(evil, 0o755);
  const args = {
    cmd: 'echo "ran x=[$X]"; grep NoNewPrivs /proc/self/status',
    shell: evil,
    env: { X: "set" },
    login: true,
    yield_time_ms: 5000,
  };
  const privileged = await manager.exec(args, undefined, { privileged: true });
  expect(privileged.output).toContain("ran x=[]");
  expect(privileged.output).not.toContain("EVIL-SHELL");
  expect(privileged.output).toMatch(/NoNewPrivs:\s+0/);
  // Unprivileged, the call runs as asked (confined).
  const confined = await manager.exec(args);
  expect(confined.output).toContain("EVIL-SHELL");
  expect(confined.output).toContain("ran x=[set]");
  expect(confined.output).toMatch(/NoNewPrivs:\s+1/);
});

test("a bare escalation is exec'd as its words: no shell, its program from the system bin directories, a fixed environment", async () => {
  process.env.SSH_CLIENT = "10.0.0.1 1 22";
  try {
    const result = await manager.exec({ cmd: "env", yield_time_ms: 5000 }, undefined, { privileged: true, argv: ["env"] });
    expect(result.output).toContain("PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    expect(result.output).not.toContain("SSH_CLIENT");
    await expect(
      manager.exec({ cmd: "no-such-program-x" }, undefined, { privileged: true, argv: ["no-such-program-x"] }),
    ).rejects.toMatchObject({
      code: "pty_spawn_failed",
    });
  } finally {
    delete process.env.SSH_CLIENT;
  }
});
