import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lookupPeer } from "../../src/http/peerProcess.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// A /proc of our own making: the shapes an attacker can give its process tree, without having to
// make 4,000 processes or a thread-leader exit for real.

afterAll(removeTempDirs);

const ROOT = 1000;
const INODE = 777_001;
const CLIENT_PORT = 40_000;
const SERVER_PORT = 8080;

function makeProcess(proc: string, pid: number, ppid: number, threads: Record<number, string[]>, children?: number[]): void {
  mkdirSync(join(proc, String(pid), "task"), { recursive: true });
  writeFileSync(join(proc, String(pid), "stat"), `${pid} (p${pid}) S ${ppid} ${pid} ${pid} 0 -1 4194560 0\n`);
  for (const [tid, links] of Object.entries(threads)) {
    const fd = join(proc, String(pid), "task", tid, "fd");
    mkdirSync(fd, { recursive: true });
    for (const [index, link] of links.entries()) symlinkSync(link, join(fd, String(index + 3)));
    if (children !== undefined)
      writeFileSync(join(proc, String(pid), "task", tid, "children"), Number(tid) === pid ? children.map((c) => `${c} `).join("") : "");
  }
}

const peer = { address: "127.0.0.1", port: CLIENT_PORT, serverPort: SERVER_PORT };

describe("the peer lookup against trees made to hide the agent", () => {
  test("a holder 400 parents below agentd, past what the walk follows, is still the agent", () => {
    const proc = makeTempDir("agentd-fake-proc-");
    fakeTables(proc);
    makeProcess(proc, 1, 0, { 1: [] });
    makeProcess(proc, ROOT, 1, { [ROOT]: [] });
    let parent = ROOT;
    for (let depth = 1; depth <= 400; depth++) {
      const pid = ROOT + depth;
      makeProcess(proc, pid, parent, { [pid]: depth === 400 ? [`socket:[${INODE}]`] : [] });
      parent = pid;
    }
    expect(lookupPeer(peer, { roots: [ROOT], procRoot: proc })).toMatchObject({ agent: true });
  });

  test("a process whose first thread exited, its socket held by another thread, is not a quiet tree", () => {
    const proc = makeTempDir("agentd-fake-proc-");
    fakeTables(proc);
    makeProcess(proc, ROOT, 1, { [ROOT]: [] }, [2000]);
    makeProcess(proc, 2000, ROOT, { 2000: [], 2001: [`socket:[${INODE}]`] }, []);
    // A stranger holding nothing: had the thread been missed, nobody would hold the socket.
    expect(lookupPeer(peer, { roots: [ROOT], procRoot: proc, quietTreeIsPerson: true })).toMatchObject({ agent: true, pid: 2000 });
  });

  test("a socket held outside the tree is a person; one held by nobody is not", () => {
    const proc = makeTempDir("agentd-fake-proc-");
    fakeTables(proc);
    makeProcess(proc, 1, 0, { 1: [] });
    makeProcess(proc, ROOT, 1, { [ROOT]: [] }, [2000]);
    makeProcess(proc, 2000, ROOT, { 2000: ["socket:[5]"] }, []);
    expect(lookupPeer(peer, { roots: [ROOT], procRoot: proc })).toMatchObject({
      agent: true,
      why: "the connection's process could not be found",
    });
    makeProcess(proc, 3000, 1, { 3000: [`socket:[${INODE}]`] });
    expect(lookupPeer(peer, { roots: [ROOT], procRoot: proc })).toMatchObject({ agent: false, why: "not started by agentd" });
  });
});

function fakeTables(proc: string): void {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, "0");
  mkdirSync(join(proc, "net"));
  writeFileSync(
    join(proc, "net", "tcp"),
    `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:${hex(CLIENT_PORT)} 0100007F:${hex(SERVER_PORT)} 01 00000000:00000000 00:00000000 00000000 ${process.getuid!()} 0 ${INODE} 1 0000000000000000 20 4 30 10 -1\n`,
  );
  writeFileSync(join(proc, "net", "tcp6"), "  sl  local_address remote_address st\n");
}
