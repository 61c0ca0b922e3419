import { afterAll, describe, expect, test } from "bun:test";
import type { Capability } from "../../src/core/capability.ts";
import { setLogSink } from "../../src/core/log/index.ts";
import { CapabilityStack } from "../../src/daemon/capabilityStack.ts";
import { createPtyCapability, ptyConfigSchema } from "../../src/pty/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

setLogSink(() => {});
afterAll(removeTempDirs);

const toolContext = { signal: new AbortController().signal, progress: () => {} };

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A capability that only notes when it is closed. */
function noting(name: string, closed: string[]): Capability {
  return { name, reload: () => ({ applied: [], needsRestart: [] }), close: async () => void closed.push(name) };
}

describe("capabilities start in order", () => {
  test("one that throws at start closes those already started, newest first, and starts none after it", async () => {
    const closed: string[] = [];
    let pid = 0;
    let later = false;
    const failing = CapabilityStack.compose(async (stack) => {
      const pty = stack.start(() => {
        const real = createPtyCapability({
          dataDir: makeTempDir("agentd-stack-"),
          config: ptyConfigSchema().parse({ close_grace_ms: 200 }),
        });
        const close = () => {
          closed.push("pty");
          return real.close();
        };
        return { ...real, close };
      });
      const exec = pty.tools!.find((tool) => tool.name === "exec_command")!;
      await exec.execute(exec.parameters.parse({ cmd: "sleep 60", yield_time_ms: 100 }), toolContext);
      pid = pty.sessions()[0]!.pid;
      expect(alive(pid)).toBe(true);
      stack.start(() => noting("files", closed));
      stack.start((): Capability => {
        throw new Error("hop cannot start");
      });
      later = true;
      stack.start(() => noting("agent", closed));
    });
    await expect(failing).rejects.toThrow("hop cannot start");
    expect(closed).toEqual(["files", "pty"]);
    expect(later).toBe(false);
    // The terminal the PTY capability had opened is gone with it.
    expect(alive(pid)).toBe(false);
  });

  test("a normal stop closes every capability, newest first, once", async () => {
    const closed: string[] = [];
    const { stack } = await CapabilityStack.compose((stack) => {
      for (const name of ["proxy", "pty", "agent"]) stack.start(() => noting(name, closed));
    });
    expect(stack.started.map((capability) => capability.name)).toEqual(["proxy", "pty", "agent"]);
    await stack.close();
    await stack.close();
    expect(closed).toEqual(["agent", "pty", "proxy"]);
  });
});
