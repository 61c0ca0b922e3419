import { describe, expect, test } from "bun:test";
import { type IdentityHost, resolveCommandIdentity } from "../../../src/core/process/identity/index.ts";

type Stat = { uid: number; gid: number; mode: number };
const DIR = 0o040000;
const FILE = 0o100000;

/** A host of files and accounts, as the identity sees them (no I/O). */
function host(
  files: Record<string, Stat>,
  options: { uid?: number; users?: string[]; namespaces?: string } = {},
): IdentityHost & { created: string[] } {
  const users = [...(options.users ?? ["root:x:0:0::/root:/bin/bash", "agentd-cmd:x:998:998::/nonexistent:/usr/sbin/nologin"])];
  const created: string[] = [];
  return {
    created,
    uid: options.uid ?? 0,
    passwd: () => users.join("\n"),
    group: () => "root:x:0:\nadm:x:4:\nagentd-cmd:x:998:\n",
    createUser(name) {
      created.push(name);
      users.push(`${name}:x:997:997::/nonexistent:/usr/sbin/nologin`);
    },
    stat: (path) => files[path],
    realpath: (path) => {
      if (!files[path]) throw new Error("ENOENT");
      return path;
    },
    namespaces: () => options.namespaces,
  };
}

const safe: Record<string, Stat> = {
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
  "/tmp": { uid: 0, gid: 0, mode: DIR | 0o1777 },
};
const own = { binary: "/usr/local/bin/agentd", config: "/etc/agentd/agentd.jsonc", dataDir: "/var/lib/agentd" };

describe("resolveCommandIdentity", () => {
  test("as root, the systemd layout: commands run as agentd-cmd with its groups, and the gate holds", () => {
    const identity = resolveCommandIdentity({ user: "agentd-cmd", groups: ["adm"] }, own, host(safe));
    expect(identity).toMatchObject({ mode: "command_user", user: "agentd-cmd", home: "/nonexistent", problems: [] });
    expect(identity.credentials).toEqual({ uid: 998, gid: 998, groups: [998, 4] });
  });

  test("the default user is created when missing; a configured one that is missing is an error, never root", () => {
    const fresh = host(safe, { users: ["root:x:0:0::/root:/bin/bash"] });
    expect(resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, own, fresh).credentials?.uid).toBe(997);
    expect(fresh.created).toEqual(["agentd-cmd"]);
    expect(() => resolveCommandIdentity({ user: "nosuch", groups: [] }, own, host(safe))).toThrow(/no user nosuch/);
    expect(() => resolveCommandIdentity({ user: "root", groups: [] }, own, host(safe))).toThrow(/is root/);
    expect(() => resolveCommandIdentity({ user: "agentd-cmd", groups: ["nogroup"] }, own, host(safe))).toThrow(/no group nogroup/);
  });

  test("doctor only looks: the missing default user is not created", () => {
    const fresh = host(safe, { users: ["root:x:0:0::/root:/bin/bash"] });
    expect(() => resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, own, fresh, false)).toThrow(/no user agentd-cmd/);
    expect(fresh.created).toEqual([]);
  });

  test("own files within the command user's reach are named: a readable config, a writable directory above the binary", () => {
    const exposed = {
      ...safe,
      "/etc/agentd/agentd.jsonc": { uid: 0, gid: 0, mode: FILE | 0o644 },
      "/etc/agentd": { uid: 0, gid: 0, mode: DIR | 0o755 },
      "/usr/local/bin": { uid: 998, gid: 998, mode: DIR | 0o755 },
    };
    const identity = resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, own, host(exposed));
    expect(identity.problems).toEqual([
      "agentd-cmd can write /usr/local/bin, above /usr/local/bin/agentd",
      "agentd-cmd can read /etc/agentd/agentd.jsonc",
    ]);
  });

  test("a data dir in a sticky /tmp is safe when root owns it; one the command user owns is not", () => {
    const inTmp = { ...safe, "/tmp/agentd": { uid: 0, gid: 0, mode: DIR | 0o700 } };
    const tmpOwn = { ...own, dataDir: "/tmp/agentd" };
    expect(resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, tmpOwn, host(inTmp)).problems).toEqual([]);
    const taken = { ...safe, "/tmp/agentd": { uid: 998, gid: 998, mode: DIR | 0o700 } };
    expect(resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, tmpOwn, host(taken)).problems).toEqual([
      "agentd-cmd can write /tmp/agentd",
      // Its own entry in a sticky directory it may also rename away.
      "agentd-cmd can write /tmp, above /tmp/agentd",
    ]);
  });

  test("started as a user where namespaces work: the sandbox hides the data dir and config, keeps the binary read-only", () => {
    const identity = resolveCommandIdentity({ user: "agentd-cmd", groups: [] }, own, host(safe, { uid: 1000 }));
    expect(identity.mode).toBe("namespaces");
    expect(identity.credentials).toBeUndefined();
    expect(identity.sandbox).toEqual({
      hide: ["/var/lib/agentd", "/etc/agentd/agentd.jsonc"],
      readOnly: ["/usr/local/bin/agentd"],
      privateTerminals: true,
    });
    // The gate holds; what the sandbox does not cover is said: the user's own other files.
    expect(identity.problems).toEqual([]);
    expect(identity.limits).toContain("dotfiles");
  });

  test("started as a user without namespaces: unguarded, and it says why", () => {
    const identity = resolveCommandIdentity(
      { user: "agentd-cmd", groups: [] },
      own,
      host(safe, { uid: 1000, namespaces: "user namespaces are disabled" }),
    );
    expect(identity.mode).toBe("unguarded");
    expect(identity.sandbox).toBeUndefined();
    expect(identity.problems[0]).toContain("not root, and cannot sandbox its commands (user namespaces are disabled)");
  });
});
