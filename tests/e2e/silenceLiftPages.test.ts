import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { ensureBinary } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";
import { api, startDaemon, type DaemonProcess } from "./support/daemonProcess.ts";

// A check fails under a silence: nothing pages. Lifting the silence while the incident is still
// open pages it (the webhook gets the alert) and the timeline says why.

let daemon: DaemonProcess | undefined;
const servers: Array<{ stop: (force?: boolean) => void }> = [];

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  for (const server of servers.splice(0)) server.stop(true);
}, 60_000);
afterAll(removeTempDirs);

describe("lifting a silence, end to end against ./agentd", () => {
  test("an incident opened under a silence pages once the silence is lifted", async () => {
    await ensureBinary();
    const home = makeTempDir("agentd-wd-silence-");
    const dataDir = join(home, "data");
    mkdirSync(dataDir);
    const pages: Array<{ kind: string; incident_id: number; title: string }> = [];
    const receiver = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: async (request) => {
        pages.push((await request.json()) as (typeof pages)[number]);
        return new Response("ok");
      },
    });
    servers.push(receiver);
    const service = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("up") });
    servers.push(service);
    daemon = await startDaemon({
      dataDir,
      config: {
        watchdog: {
          tick_ms: 100,
          resolve_after_s: 3600,
          webhook: { url: `http://127.0.0.1:${receiver.port}/hook`, retries: 0 },
          checks: [
            { type: "tcp", name: "db", port: service.port, interval_s: 0.2, failure_threshold: 2, success_threshold: 1, timeout_ms: 1000 },
          ],
        },
      },
    });
    const url = daemon.url;
    const { silence } = await api<{ silence: { id: number } }>(url, "/api/incidents/silences", {
      body: { target: "db", duration_s: 3600, reason: "maintenance" },
      expect: 201,
    });
    service.stop(true);

    const incidentOfCheck = async () =>
      (
        await api<{ incidents: Array<{ id: number; fingerprint: string; action: string | null }> }>(url, "/api/incidents?state=unresolved")
      ).incidents.find((i) => i.fingerprint === "check:db");
    const opened = await waitFor("the check's incident", incidentOfCheck, { timeoutMs: 60_000, intervalMs: 100 });
    await waitFor(
      "the silence noted",
      async () =>
        (await api<{ timeline: Array<{ kind: string }> }>(url, `/api/incidents/${opened.id}`)).timeline.some(
          (e) => e.kind === "silenced",
        ) || undefined,
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    // Ten ticks under the silence (tick_ms 100): no page, no action. Nothing to wait for when nothing should happen.
    await Bun.sleep(1000);
    expect(pages).toEqual([]);
    expect((await incidentOfCheck())!.action).toBeNull();

    await api(url, `/api/incidents/silences/${silence.id}`, { method: "DELETE" });
    await waitFor("the page", () => pages.find((p) => p.incident_id === opened.id), { timeoutMs: 30_000, intervalMs: 50 });
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ kind: "alert", incident_id: opened.id });
    const shown = await api<{ incident: { action: string }; timeline: Array<{ kind: string; message: string }> }>(
      url,
      `/api/incidents/${opened.id}`,
    );
    expect(shown.incident.action).toBe("alert");
    expect(shown.timeline.map((e) => e.kind)).toEqual(expect.arrayContaining(["silenced", "silence_ended", "action", "alert"]));
  }, 180_000);
});
