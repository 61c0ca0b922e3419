/**
 * A kept-alive upstream connection waiting in the pool must not keep a process alive: the worker
 * returns from its shutdown and exits, as it did on fetch, instead of waiting for the supervisor's
 * kill. A child process makes one call and returns; the upstream never closes idle connections.
 */
import { afterEach, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterEach(() => removeTempDirs());

test("a process whose last call left a connection in the pool exits on its own", async () => {
  const upstream = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: () => Response.json({ ok: true }) });
  const script = join(makeTempDir("agentd-http1-exit-"), "call.ts");
  writeFileSync(
    script,
    `import { Http1Client } from ${JSON.stringify(join(PROJECT_ROOT, "src/proxy/upstream/http1Client.ts"))};
import { CallAbort } from ${JSON.stringify(join(PROJECT_ROOT, "src/proxy/upstream/callAbort.ts"))};
const answer = await new Http1Client().post({ url: new URL(process.argv[2]), headers: {}, body: "{}", abort: new CallAbort(), bufferUpTo: 1024 });
console.log(await answer.text());
`,
  );
  const child = Bun.spawn([process.execPath, script, `http://127.0.0.1:${upstream.port}/v1/chat/completions`], {
    stdout: "pipe",
    stderr: "inherit",
  });
  // A hang is forever: this bound only turns it into a failure instead of a stuck suite.
  const watchdog = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const code = await child.exited;
  clearTimeout(watchdog);
  upstream.stop(true);
  expect(await new Response(child.stdout).text()).toBe('{"ok":true}\n');
  expect(code).toBe(0);
});
