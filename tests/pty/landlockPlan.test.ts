import { describe, expect, test } from "bun:test";
import { ancestorsOf, planHiding, type PlanFs } from "../../src/pty/confine/landlockPlan.ts";

/** A small tree: directories end in "/", "@" marks a symbolic link. */
function fakeFs(entries: Record<string, string[]>, writable: string[] = []): PlanFs {
  return {
    list: (dir) =>
      entries[dir]?.map((name) => ({ name: name.replace(/[/@]$/, ""), directory: name.endsWith("/"), symlink: name.endsWith("@") })),
    writable: (dir) => writable.includes(dir),
  };
}

const tree = {
  "/": ["bin@", "etc/", "home/", "tmp/", "var/", "vmlinuz@"],
  "/var": ["cache/", "lib/", "log/"],
  "/var/lib": ["agentd/", "apt/", "dpkg/", "machine-id"],
  "/etc": ["agentd/", "passwd", "ssl/"],
  "/etc/agentd": ["agentd.jsonc", "env"],
};

describe("planHiding", () => {
  test("ancestors may only be listed; every other entry gets everything; links get no rule", () => {
    const plan = planHiding(["/var/lib/agentd"], fakeFs(tree));
    expect(plan.hidden).toEqual(["/var/lib/agentd"]);
    expect(plan.exposed).toEqual([]);
    expect(plan.rules).toEqual([
      { path: "/", access: "list", directory: true },
      { path: "/etc", access: "all", directory: true },
      { path: "/home", access: "all", directory: true },
      { path: "/tmp", access: "all", directory: true },
      { path: "/var", access: "list", directory: true },
      { path: "/var/cache", access: "all", directory: true },
      { path: "/var/log", access: "all", directory: true },
      { path: "/var/lib", access: "list", directory: true },
      { path: "/var/lib/apt", access: "all", directory: true },
      { path: "/var/lib/dpkg", access: "all", directory: true },
      { path: "/var/lib/machine-id", access: "all", directory: false },
    ]);
    expect(plan.rules.some((r) => r.path.startsWith("/var/lib/agentd"))).toBe(false);
  });

  test("a data dir and a config file elsewhere: both hidden, a file's siblings kept", () => {
    const plan = planHiding(["/var/lib/agentd", "/etc/agentd/agentd.jsonc", "/var/lib/agentd/token"], fakeFs(tree));
    expect(plan.hidden).toEqual(["/var/lib/agentd", "/etc/agentd/agentd.jsonc"]);
    expect(plan.rules.filter((r) => r.path.startsWith("/etc"))).toEqual([
      { path: "/etc", access: "list", directory: true },
      { path: "/etc/passwd", access: "all", directory: false },
      { path: "/etc/ssl", access: "all", directory: true },
      { path: "/etc/agentd", access: "list", directory: true },
      { path: "/etc/agentd/env", access: "all", directory: false },
    ]);
  });

  test("a path under a directory agentd's user can write is left exposed, with the reason", () => {
    const plan = planHiding(
      ["/home/op/.agentd", "/var/lib/agentd"],
      fakeFs({ ...tree, "/home": ["op/"], "/home/op": [".agentd/"] }, ["/home/op"]),
    );
    expect(plan.hidden).toEqual(["/var/lib/agentd"]);
    expect(plan.exposed).toEqual([
      {
        path: "/home/op/.agentd",
        why: "/home/op is writable by agentd's user, so hiding /home/op/.agentd would keep commands from making files there",
      },
    ]);
    expect(plan.rules.some((r) => r.path.startsWith("/home/op"))).toBe(false);
  });

  test("an ancestor that cannot be listed hides nothing", () => {
    const plan = planHiding(["/srv/agentd"], fakeFs({ "/": ["srv/"] }));
    expect(plan).toEqual({ rules: [], hidden: [], exposed: [{ path: "/srv/agentd", why: "/srv cannot be listed" }] });
  });

  test("ancestorsOf", () => {
    expect(ancestorsOf("/var/lib/agentd")).toEqual(["/", "/var", "/var/lib"]);
    expect(ancestorsOf("/x")).toEqual(["/"]);
  });
});
