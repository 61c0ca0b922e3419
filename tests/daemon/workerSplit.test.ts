import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { reclaimDataDir, shareDataDir, unlinkedStoreFiles } from "../../src/daemon/workerSplit.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// The data dir root shares with its worker (a service user): nobody stands in for it here. Needs root (chown).
const worker = { user: "nobody", uid: 65534, gid: 65534 };

afterAll(() => removeTempDirs());

function dataDir(): string {
  const dir = join(makeTempDir("agentd-share-"), "data");
  mkdirSync(join(dir, "logs"), { recursive: true });
  mkdirSync(join(dir, "bin"));
  mkdirSync(join(dir, "tool-output"));
  for (const file of ["agentd.db", "token", "agentd.lock", "agentd.jsonc", "bin/agentd", "tool-output/1.txt", "logs/agentd.log"])
    writeFileSync(join(dir, file), "x");
  return dir;
}

describe("shareDataDir", () => {
  test("the first time: everything but root's log directory, lock, the binary it runs and the config it reads is handed over; the dir becomes root:worker 1770", () => {
    if (process.getuid?.() !== 0) throw new Error("needs root, as agentd's supervisor does");
    const dir = dataDir();
    shareDataDir(dir, worker, { binary: join(dir, "bin", "agentd"), config: join(dir, "agentd.jsonc") });
    const owner = (path: string) => lstatSync(join(dir, path)).uid;
    expect(lstatSync(dir)).toMatchObject({ uid: 0, gid: worker.gid });
    expect(lstatSync(dir).mode & 0o7777).toBe(0o1770);
    for (const path of ["agentd.db", "token", "tool-output", "tool-output/1.txt"]) expect(owner(path)).toBe(worker.uid);
    for (const path of ["logs", "logs/agentd.log", "agentd.lock", "agentd.jsonc", "bin", "bin/agentd"]) expect(owner(path)).toBe(0);
  });

  test("later starts hand over only what root made for the worker, never following a link", () => {
    const dir = dataDir();
    shareDataDir(dir, worker, { binary: "/usr/local/bin/agentd" });
    writeFileSync(join(dir, "agentd.db-wal"), "x");
    const elsewhere = join(makeTempDir("agentd-share-elsewhere-"), "root-file");
    writeFileSync(elsewhere, "x");
    symlinkSync(elsewhere, join(dir, "agentd.db-shm"));
    shareDataDir(dir, worker, { binary: "/usr/local/bin/agentd" });
    expect(lstatSync(join(dir, "agentd.db-wal")).uid).toBe(worker.uid);
    expect(lstatSync(elsewhere).uid).toBe(0);
  });
});

describe("reclaimDataDir", () => {
  test("a data dir an earlier start shared: closed again (root:root 700), its entries root's, the token the worker user knew gone", () => {
    const dir = dataDir();
    shareDataDir(dir, worker, { binary: "/usr/local/bin/agentd" });
    expect(reclaimDataDir(dir)).toBe(true);
    expect(lstatSync(dir)).toMatchObject({ uid: 0, gid: 0 });
    expect(lstatSync(dir).mode & 0o7777).toBe(0o700);
    for (const path of ["agentd.db", "tool-output", "agentd.jsonc"]) expect(lstatSync(join(dir, path)).uid).toBe(0);
    expect(existsSync(join(dir, "token"))).toBe(false);
  });

  test("a directory that was never shared is left as it is", () => {
    const dir = dataDir();
    chmodSync(dir, 0o755);
    expect(reclaimDataDir(dir)).toBe(false);
    expect(lstatSync(dir).mode & 0o7777).toBe(0o755);
    expect(existsSync(join(dir, "token"))).toBe(true);
  });
});

describe("unlinkedStoreFiles", () => {
  test("removes links in place of the store's files and the log directory; refuses a hard-linked store file", () => {
    const dir = dataDir();
    const target = join(makeTempDir("agentd-share-target-"), "passwd");
    writeFileSync(target, "root");
    symlinkSync(target, join(dir, "agentd.db-wal"));
    expect(unlinkedStoreFiles(dir)).toEqual({ removed: [join(dir, "agentd.db-wal")] });
    const logs = join(makeTempDir("agentd-share-logs-"), "data");
    mkdirSync(logs);
    for (const file of ["agentd.db"]) writeFileSync(join(logs, file), "x");
    symlinkSync("/etc", join(logs, "logs"));
    expect(unlinkedStoreFiles(logs).removed).toEqual([join(logs, "logs")]);
    const linked = dataDir();
    linkSync(join(linked, "agentd.db"), join(linked, "agentd.db-copy"));
    expect(unlinkedStoreFiles(linked).refused).toContain("has 2 names");
  });
});
