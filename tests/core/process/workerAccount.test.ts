import { describe, expect, test } from "bun:test";
import { type IdentityHost, resolveCommandIdentity, resolveWorkerAccount } from "../../../src/core/process/identity/index.ts";

type Stat = { uid: number; gid: number; mode: number };
const DIR = 0o040000;
const FILE = 0o100000;
const ROOT_USERS = ["root:x:0:0::/root:/bin/bash", "agentd-cmd:x:998:998::/var/lib/agentd-cmd:/usr/sbin/nologin"];

/** Accounts and files as the resolver sees them (no I/O); createUser records how it was asked. */
function host(files: Record<string, Stat>, users: string[] = [...ROOT_USERS, "agentd:x:996:996::/:/usr/sbin/nologin"], uid = 0) {
  const created: Array<{ name: string; home: boolean | undefined }> = [];
  const fake: IdentityHost & { created: typeof created } = {
    created,
    uid,
    passwd: () => users.join("\n"),
    group: () => "root:x:0:\nagentd-cmd:x:998:\nagentd:x:996:\n",
    createUser(name, home) {
      created.push({ name, home });
      users.push(`${name}:x:995:995::/:/usr/sbin/nologin`);
    },
    stat: (path) => files[path],
    realpath: (path) => {
      if (!files[path]) throw new Error("ENOENT");
      return path;
    },
    namespaces: () => undefined,
  };
  return fake;
}

const systemd: Record<string, Stat> = {
  "/": { uid: 0, gid: 0, mode: DIR | 0o755 },
  "/usr": { uid: 0, gid: 0, mode: DIR | 0o755 },
  "/usr/local": { uid: 0, gid: 0, mode: DIR | 0o755 },
  "/usr/local/bin": { uid: 0, gid: 0, mode: DIR | 0o755 },
  "/usr/local/bin/agentd": { uid: 0, gid: 0, mode: FILE | 0o755 },
  "/etc": { uid: 0, gid: 0, mode: DIR | 0o755 },
  "/etc/agentd": { uid: 0, gid: 0, mode: DIR | 0o700 },
  "/etc/agentd/agentd.jsonc": { uid: 0, gid: 0, mode: FILE | 0o600 },
  "/var": { uid: 0, gid: 0, mode: DIR | 0o755 },
  "/var/lib": { uid: 0, gid: 0, mode: DIR | 0o755 },
  "/var/lib/agentd": { uid: 0, gid: 0, mode: DIR | 0o700 },
};
const own = { binary: "/usr/local/bin/agentd", config: "/etc/agentd/agentd.jsonc", dataDir: "/var/lib/agentd" };
const commands = (h: IdentityHost) => resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, own, h);

describe("resolveWorkerAccount", () => {
  test("the systemd layout: the worker runs as agentd; the config may stay root's alone (the monitor reads it)", () => {
    const h = host(systemd);
    expect(resolveWorkerAccount("agentd", commands(h), own, h)).toEqual({ user: "agentd", uid: 996, gid: 996 });
  });

  test("the default user is created when missing, without a home; doctor only looks", () => {
    const h = host(systemd, [...ROOT_USERS]);
    expect(resolveWorkerAccount("agentd", commands(h), own, h, false)).toEqual({
      problem: "the service user agentd does not exist yet: `agentd serve` creates it at start",
    });
    expect(h.created).toEqual([]);
    expect(resolveWorkerAccount("agentd", commands(h), own, h)).toMatchObject({ user: "agentd", uid: 995 });
    expect(h.created).toEqual([{ name: "agentd", home: false }]);
  });

  test("never root, never the command user, never a missing configured user", () => {
    const h = host(systemd, [...ROOT_USERS, "toor:x:0:0::/:/bin/sh"]);
    expect(resolveWorkerAccount("toor", commands(h), own, h)).toEqual({ problem: "toor is root (uid 0, gid 0)" });
    expect(resolveWorkerAccount("agentd-cmd", commands(h), own, h)).toEqual({ problem: "agentd-cmd is the command user" });
    expect(resolveWorkerAccount("svc", commands(h), own, h)).toMatchObject({ problem: expect.stringContaining("no user svc") });
  });

  test("a quick start in root's own clone stays one root worker, saying why: the service user cannot reach the binary", () => {
    const clone: Record<string, Stat> = {
      "/": { uid: 0, gid: 0, mode: DIR | 0o755 },
      "/root": { uid: 0, gid: 0, mode: DIR | 0o700 },
      "/root/agentd": { uid: 0, gid: 0, mode: DIR | 0o755 },
      "/root/agentd/agentd": { uid: 0, gid: 0, mode: FILE | 0o755 },
      "/root/agentd/.agentd": { uid: 0, gid: 0, mode: DIR | 0o700 },
    };
    const h = host(clone);
    const paths = { binary: "/root/agentd/agentd", dataDir: "/root/agentd/.agentd" };
    const identity = resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, paths, h);
    expect(resolveWorkerAccount("agentd", identity, paths, h)).toEqual({
      problem: "uid 996 cannot enter /root, above /root/agentd/agentd",
    });
  });

  test("a binary the service user could replace keeps the worker root: the supervisor runs it again as root", () => {
    const writable = { ...systemd, "/usr/local/bin": { uid: 996, gid: 996, mode: DIR | 0o755 } };
    const h = host(writable);
    expect(resolveWorkerAccount("agentd", commands(host(systemd)), own, h)).toMatchObject({
      problem: expect.stringContaining("agentd can write /usr/local/bin"),
    });
  });

  test("started as a user there is no split", () => {
    const h = host(systemd, ROOT_USERS, 1000);
    expect(resolveWorkerAccount("agentd", commands(host(systemd)), own, h)).toEqual({ problem: "agentd is not started as root" });
  });
});
