import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { createServer, type Server as NetServer } from "node:net";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// A configured tcp check through the compiled ./agentd: the supervisor's check scheduler fails it
// (debounced), the watchdog opens and alerts an incident, the worker's status page shows the check
// failing; once something listens on the port the check passes and the incident resolves itself.

interface IncidentView {
  id: number;
  title: string;
  state: string;
  fingerprint: string;
  pattern: string | null;
  action: string | null;
  details: Record<string, unknown>;
}

interface CheckView {
  name: string;
  kind: string;
  state: string;
  output?: string;
}

let daemon: DaemonProcess | undefined;
const listeners: NetServer[] = [];

afterEach(async () => {
  for (const listener of listeners.splice(0)) await new Promise((resolve) => listener.close(resolve));
  await daemon?.stop();
  daemon = undefined;
}, 60_000);
afterAll(removeTempDirs);

/** A port nothing listens on: one the OS just gave out and took back. */
function closedPort(): number {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

async function listenOn(port: number): Promise<void> {
  const listener = createServer((socket) => socket.end());
  listeners.push(listener);
  await new Promise<void>((resolve, reject) => {
    listener.once("error", reject);
    listener.listen(port, "127.0.0.1", resolve);
  });
}

const checkIncidents = async (url: string, state = "all") => {
  const query = state === "all" ? "" : `&state=${state}`;
  return (await api<{ incidents: IncidentView[] }>(url, `/api/incidents?limit=500${query}`)).incidents.filter(
    (i) => i.fingerprint === "check:db",
  );
};

const checkRow = async (url: string): Promise<CheckView | undefined> => {
  const status = await api<{ watchdog: { configured: boolean; rows: CheckView[] } }>(url, "/status?format=json");
  return status.watchdog.rows.find((row) => row.name === "db");
};

describe("watchdog checks, end to end against ./agentd", () => {
  test("a tcp check on a closed port opens an incident and shows fail; a listener makes it pass and the incident resolves", async () => {
    await ensureBinary();
    const port = closedPort();
    const dataDir = join(makeTempDir("agentd-wd-checks-"), "data");
    mkdirSync(dataDir);
    daemon = await startDaemon({
      dataDir,
      config: {
        watchdog: {
          tick_ms: 100,
          resolve_after_s: 1,
          checks: [
            {
              type: "tcp",
              name: "db",
              host: "127.0.0.1",
              port,
              interval_s: 0.2,
              timeout_ms: 2000,
              failure_threshold: 2,
              success_threshold: 1,
            },
          ],
        },
      },
    });
    const url = daemon.url;

    const [opened] = await waitFor(
      "the check's incident",
      async () => {
        const found = await checkIncidents(url, "unresolved");
        return found.length > 0 ? found : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(opened).toMatchObject({ title: "Check db failing — check:db", state: "open", pattern: "check.tcp" });

    const failing = await waitFor(
      "the check to show fail on /status",
      async () => {
        const row = await checkRow(url);
        return row?.state === "fail" ? row : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(failing).toMatchObject({ name: "db", kind: "tcp" });
    expect(failing.output).toContain(`127.0.0.1:${port}`);
    // No rule covers a failing tcp check: the watchdog alerts instead.
    await waitFor("the alert", () => daemon!.lines.find((r) => r.event === "watchdog.alert" && r.incident_id === opened!.id), {
      timeoutMs: 60_000,
    });

    await listenOn(port);

    const passing = await waitFor(
      "the check to show pass on /status",
      async () => {
        const row = await checkRow(url);
        return row?.state === "pass" ? row : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(passing.output).toBe(`connected to 127.0.0.1:${port}`);

    const resolved = await waitFor(
      "the incident to resolve",
      async () => (await checkIncidents(url, "resolved")).find((i) => i.id === opened!.id),
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    expect(resolved.state).toBe("resolved");
    expect(resolved.details).toMatchObject({ resolved_by: "watchdog" });
    expect((resolved.details.alerts as Array<{ kind: string }>).map((a) => a.kind)).toEqual(["alert", "resolved"]);
    // One episode: nothing else opened for the check while it failed and recovered.
    expect((await checkIncidents(url)).map((i) => i.id)).toEqual([opened!.id]);
    expect(await checkIncidents(url, "unresolved")).toEqual([]);
  }, 180_000);
});
