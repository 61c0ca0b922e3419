import { afterAll, describe, expect, test } from "bun:test";
import { createServer } from "node:net";
import { join } from "node:path";
import { createHopManager, hopMigrations, hopsConfigSchema, type HopManager } from "../../src/hop/index.ts";
import { HopStore, type HopRecord } from "../../src/hop/hopStore.ts";
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

function record(name: string, state: string, extra: Partial<HopRecord> = {}): HopRecord {
  return {
    name,
    destination: "ops@127.0.0.1:2222",
    via: [],
    identity: null,
    state,
    mode: "agentd",
    remote_version: "0.1.0",
    remote_platform: "Linux x86_64 glibc",
    opened_at: 1000,
    last_change: Date.now(),
    last_error: null,
    ...extra,
  };
}

describe("resuming hops after a worker restart", () => {
  const dbs: Database[] = [];
  const managers: HopManager[] = [];

  const freshStore = () => {
    const db = openStore({ path: join(makeTempDir("agentd-hop-resume-"), "agentd.db"), migrations: [...baseMigrations, ...hopMigrations] });
    dbs.push(db);
    return db;
  };

  afterAll(async () => {
    for (const manager of managers) await manager.close();
    for (const db of dbs) db.close();
    removeTempDirs();
  });

  test("the store keeps the identity path and offers the hops that were open", () => {
    const store = new HopStore(freshStore());
    for (const state of ["connected", "reconnecting", "fallback", "closed", "connecting"])
      store.save(record(state, state, { identity: "/home/ops/.ssh/id_ed25519", via: ["ops@jump:2200"] }));
    const resumable = store.resumable();
    expect(resumable.map((r) => r.name).sort()).toEqual(["connected", "fallback", "reconnecting"]);
    expect(resumable[0]).toMatchObject({ identity: "/home/ops/.ssh/id_ed25519", via: ["ops@jump:2200"] });
    store.closeUnfinishedOpens("restarted while opening", 5000);
    expect(store.list().find((r) => r.name === "connecting")).toMatchObject({
      state: "closed",
      last_error: "restarted while opening",
      last_change: 5000,
    });
    expect(store.list().find((r) => r.name === "connected")?.state).toBe("connected");
  });

  test("open hops show reconnecting at once and end closed past reconnect_give_up_s; closed and unfinished ones stay closed", async () => {
    const db = freshStore();
    const store = new HopStore(db);
    const port = await closedPort();
    const destination = `ops@127.0.0.1:${port}`;
    store.save(record("up", "connected", { destination }));
    store.save(record("long-gone", "reconnecting", { destination, last_change: Date.now() - 3_600_000 }));
    store.save(record("user-closed", "closed", { destination }));
    store.save(record("half-open", "connecting", { destination }));
    store.save(record("garbled", "connected", { destination: "ops@a:b:c" }));
    const local = makeTempDir("agentd-hop-resume-local-");
    const config = hopsConfigSchema().parse({
      known_hosts: join(local, "known_hosts"),
      identity_files: [],
      use_agent: false,
      reconnect_initial_ms: 50,
      reconnect_max_ms: 200,
      reconnect_give_up_s: 2,
    });
    const started = Date.now();
    const manager = createHopManager({ db, dataDir: local, config, selfBinaryPath: undefined });
    managers.push(manager);

    expect(manager.get("up")).toMatchObject({ state: "reconnecting", opened_at: 1000, destination });
    expect(manager.get("long-gone").state).toBe("reconnecting");
    expect(manager.get("user-closed").state).toBe("closed");
    expect(manager.get("half-open")).toMatchObject({
      state: "closed",
      last_error: expect.stringContaining("before the hop finished opening"),
    });
    expect(manager.get("garbled")).toMatchObject({ state: "closed", last_error: expect.stringContaining("Cannot reopen") });
    expect(() => manager.client("up")).toThrow(expect.objectContaining({ code: "hop_disconnected" }));

    // Its deadline passed while the previous worker was down: one failed attempt ends it.
    await waitFor("long-gone to give up", () => manager.get("long-gone").state === "closed", { timeoutMs: 30_000 });
    await waitFor("up to give up", () => manager.get("up").state === "closed", { timeoutMs: 60_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(manager.get("up").last_error).toBeTruthy();
    expect(new HopStore(db).resumable()).toEqual([]);
  }, 90_000);

  test("a hop closed with closeHop while reconnecting is not resumed by the next manager", async () => {
    const db = freshStore();
    const port = await closedPort();
    new HopStore(db).save(record("h", "connected", { destination: `ops@127.0.0.1:${port}` }));
    const local = makeTempDir("agentd-hop-resume-local-");
    const config = hopsConfigSchema().parse({
      known_hosts: join(local, "known_hosts"),
      identity_files: [],
      use_agent: false,
      reconnect_initial_ms: 50,
      reconnect_max_ms: 200,
    });
    const first = createHopManager({ db, dataDir: local, config, selfBinaryPath: undefined });
    managers.push(first);
    expect(first.get("h").state).toBe("reconnecting");
    await first.closeHop("h");
    await first.close();
    const second = createHopManager({ db, dataDir: local, config, selfBinaryPath: undefined });
    managers.push(second);
    expect(second.get("h").state).toBe("closed");
    expect(() => second.client("h")).toThrow(expect.objectContaining({ code: "hop_not_found" }));
  });

  test("a hop listed closed from the record closes by that name; stopping its remote agentd when unreachable says it runs on", async () => {
    const db = freshStore();
    const port = await closedPort();
    new HopStore(db).save(record("gone", "closed", { destination: `ops@127.0.0.1:${port}`, last_error: "host key not known" }));
    const local = makeTempDir("agentd-hop-resume-local-");
    const config = hopsConfigSchema().parse({ known_hosts: join(local, "known_hosts"), identity_files: [], use_agent: false });
    const manager = createHopManager({ db, dataDir: local, config, selfBinaryPath: undefined });
    managers.push(manager);
    expect(manager.list().map((hop) => [hop.name, hop.state])).toEqual([["gone", "closed"]]);
    // The host cannot be reached to stop it: agentd says the remote agentd still runs, not "no hop".
    expect(await manager.closeHop("gone", { stopRemote: true })).toEqual({ name: "gone", stopped_remote: false, remote_agentd: "running" });
    // The record still says an agentd ran there, so a later --stop-remote still tries.
    expect(await manager.closeHop("gone")).toEqual({ name: "gone", stopped_remote: false, remote_agentd: "running" });
    await expect(manager.closeHop("never")).rejects.toMatchObject({ code: "hop_not_found" });
  });
});
