import { afterAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { join } from "node:path";
import { createHopManager, hopMigrations, hopsConfigSchema, type HopManager } from "../../src/hop/index.ts";
import { HopStore } from "../../src/hop/hopStore.ts";
import { baseMigrations, openStore, type Database } from "../../src/core/store/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { waitFor } from "../support/waitFor.ts";

/** A loopback port nothing listens on: connecting to it is refused at once. */
function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

// Each case owns its managers and stores, so the cases wait out their expiry side by side.
describe.concurrent("failed hop attempts expire", () => {
  const dbs: Database[] = [];
  const managers: HopManager[] = [];

  afterAll(async () => {
    for (const manager of managers) await manager.close();
    for (const db of dbs) db.close();
    removeTempDirs();
  });

  const managerWith = (failedExpiryS: number) => {
    const dir = makeTempDir("agentd-hop-expiry-");
    const db = openStore({ path: join(dir, "agentd.db"), migrations: [...baseMigrations, ...hopMigrations] });
    dbs.push(db);
    const config = hopsConfigSchema().parse({
      known_hosts: join(dir, "known_hosts"),
      identity_files: [],
      use_agent: false,
      connect_timeout_ms: 5000,
      failed_expiry_s: failedExpiryS,
    });
    const manager = createHopManager({ db, dataDir: dir, config, selfBinaryPath: undefined });
    managers.push(manager);
    return { manager, db };
  };

  test("a refused open is listed with its error, then gone from the list and the store after failed_expiry_s", async () => {
    const { manager, db } = managerWith(1);
    const port = await closedPort();
    const error = (await manager.open({ destination: `ops@127.0.0.1:${port}`, name: "gone" }).catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    const listed = manager.list().find((hop) => hop.name === "gone");
    expect(listed).toMatchObject({ state: "closed" });
    expect(listed?.last_error).toBeTruthy();
    await waitFor("the failed hop to expire", () => !manager.list().some((hop) => hop.name === "gone"), {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    expect(new HopStore(db).list().map((r) => r.name)).not.toContain("gone");
  });

  test("failed_expiry_s 0 keeps a failed attempt listed", async () => {
    const { manager } = managerWith(0);
    // The same failure beside it under failed_expiry_s 1: once that one has expired, so would this.
    const { manager: control } = managerWith(1);
    const port = await closedPort();
    await manager.open({ destination: `ops@127.0.0.1:${port}`, name: "kept" }).catch(() => undefined);
    await control.open({ destination: `ops@127.0.0.1:${port}`, name: "control" }).catch(() => undefined);
    await waitFor("the control attempt to expire", () => !control.list().some((hop) => hop.name === "control"), {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    expect(manager.list().find((hop) => hop.name === "kept")?.state).toBe("closed");
  });
});
