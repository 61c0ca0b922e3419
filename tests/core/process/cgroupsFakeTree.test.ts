import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { CommandCgroups, detectCgroupLayout } from "../../../src/core/process/cgroups/index.ts";
import { runOps } from "../../../src/core/process/cgroups/execute.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";

// Above PID_MAX_LIMIT (2^22): never a live process, so its instance directory is a dead agentd's.
const DEAD_PID = 4_194_305;
const LIMITS = { pidsMax: 64, memoryMaxBytes: 256 * 1_048_576, cpuWeight: 50 };

/** Plain files and directories shaped like agentd's cgroup2 directory under systemd. */
function fakeV2Tree(): { mount: string; own: string } {
  const mount = makeTempDir("agentd-cgroups-");
  const own = join(mount, "system.slice", "agentd.service");
  mkdirSync(own, { recursive: true });
  writeFileSync(join(own, "cgroup.controllers"), "cpuset cpu io memory hugetlb pids rdma\n");
  writeFileSync(join(own, "cgroup.subtree_control"), "");
  writeFileSync(join(own, "cgroup.procs"), "4242\n4243\n");
  writeFileSync(join(own, "cgroup.type"), "domain\n");
  return { mount, own };
}

const read = (path: string) => readFileSync(path, "utf8");

afterEach(() => removeTempDirs());

describe("detectCgroupLayout on given /proc/self files", () => {
  test("a cgroup2 mount at a temp dir: v2 there; a mount point that does not exist: none, saying why", () => {
    const { mount } = fakeV2Tree();
    const proc = makeTempDir("agentd-proc-");
    writeFileSync(join(proc, "mountinfo"), `26 22 0:23 / ${mount} rw,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n`);
    writeFileSync(join(proc, "cgroup"), "0::/system.slice/agentd.service\n");
    expect(detectCgroupLayout({ procSelf: proc })).toEqual({ kind: "v2", ownDir: join(mount, "system.slice", "agentd.service") });

    writeFileSync(join(proc, "mountinfo"), `26 22 0:23 / ${mount}/gone rw - cgroup2 cgroup2 rw\n`);
    const none = detectCgroupLayout({ procSelf: proc });
    expect(none).toMatchObject({ kind: "none", why: expect.stringContaining("is not writable (ENOENT)") });
    expect(detectCgroupLayout({ procSelf: join(proc, "missing") })).toMatchObject({
      kind: "none",
      why: expect.stringContaining("cannot read"),
    });
  });

  test("hybrid: a v1 hierarchy that cannot be written is left out, the rest kept", () => {
    const root = makeTempDir("agentd-cgroups-");
    mkdirSync(join(root, "pids"));
    mkdirSync(join(root, "unified"));
    const proc = makeTempDir("agentd-proc-");
    writeFileSync(
      join(proc, "mountinfo"),
      [
        `39 31 0:36 / ${root}/pids rw - cgroup cgroup rw,pids`,
        `35 31 0:32 / ${root}/memory rw - cgroup cgroup rw,memory`,
        `41 31 0:38 / ${root}/unified rw - cgroup2 cgroup2 rw`,
        "",
      ].join("\n"),
    );
    writeFileSync(join(proc, "cgroup"), "8:pids:/\n4:memory:/\n0::/\n");
    expect(detectCgroupLayout({ procSelf: proc })).toEqual({
      kind: "hybrid",
      v1: [{ controller: "pids", ownDir: `${root}/pids` }],
      unified: { ownDir: `${root}/unified` },
    });
  });
});

describe("CommandCgroups on a fake v2 tree", () => {
  test("open moves agentd's processes to the daemon leaf, enables the controllers at each level, removes a dead agentd's instance", () => {
    const { own } = fakeV2Tree();
    mkdirSync(join(own, "commands", `p${DEAD_PID}`, "s-old"), { recursive: true });
    mkdirSync(join(own, "commands", "not-an-instance"));

    const cgroups = CommandCgroups.open({ kind: "v2", ownDir: own });
    expect(cgroups.kind).toBe("v2");
    expect(cgroups.controllers).toEqual(["pids", "memory", "cpu"]);
    // One write per pid, in the order listed.
    expect(read(join(own, "daemon", "cgroup.procs"))).toBe("4242\n4243\n");
    const instance = join(own, "commands", `p${process.pid}`);
    for (const dir of [own, join(own, "commands"), instance]) expect(read(join(dir, "cgroup.subtree_control"))).toBe("+pids +memory +cpu");
    expect(existsSync(join(own, "commands", `p${DEAD_PID}`))).toBe(false);
    expect(existsSync(join(own, "commands", "not-an-instance"))).toBe(true);

    const session = cgroups.create("ab12", LIMITS);
    const dir = join(instance, "s-ab12");
    expect(session.procsPaths).toEqual([join(dir, "cgroup.procs")]);
    expect([read(join(dir, "pids.max")), read(join(dir, "memory.max")), read(join(dir, "cpu.weight"))]).toEqual(["64", "268435456", "50"]);
    // Absent here as on a kernel without swap accounting: skipped, not created.
    expect(existsSync(join(dir, "memory.swap.max"))).toBe(false);

    // pids() reads the session's cgroup.procs (a pid that cannot exist, should anything signal it).
    writeFileSync(join(dir, "cgroup.procs"), `${DEAD_PID}\n`);
    expect(session.pids()).toEqual([DEAD_PID]);
    expect(() => cgroups.create("ab12", LIMITS)).toThrow("already has a cgroup");
  });

  test("opening again from the daemon leaf's parent moves no one and reuses the subtree", () => {
    const { own } = fakeV2Tree();
    writeFileSync(join(own, "cgroup.procs"), "");
    CommandCgroups.open({ kind: "v2", ownDir: own });
    expect(existsSync(join(own, "daemon"))).toBe(false);
    const again = CommandCgroups.open({ kind: "v2", ownDir: own }, { subtreeName: "commands" });
    expect(again.kind).toBe("v2");
  });

  test("a subtree where only some controllers are delegated enables those; none delegated still gives killable sessions", () => {
    const { own } = fakeV2Tree();
    writeFileSync(join(own, "cgroup.controllers"), "memory pids\n");
    expect(CommandCgroups.open({ kind: "v2", ownDir: own }).controllers).toEqual(["pids", "memory"]);
    expect(read(join(own, "cgroup.subtree_control"))).toBe("+pids +memory");

    const bare = fakeV2Tree();
    writeFileSync(join(bare.own, "cgroup.controllers"), "\n");
    const cgroups = CommandCgroups.open({ kind: "v2", ownDir: bare.own });
    expect(cgroups.controllers).toEqual([]);
    expect(read(join(bare.own, "cgroup.subtree_control"))).toBe("");
    const session = cgroups.create("x1", LIMITS);
    expect(existsSync(join(bare.own, "commands", `p${process.pid}`, "s-x1"))).toBe(true);
    expect(session.procsPaths).toHaveLength(1);
  });

  test("no layout, not a cgroup directory, a bad subtree name: a cgroup_unavailable (or internal) error that says why", () => {
    expect(() => CommandCgroups.open({ kind: "none", why: "not root" })).toThrow(
      expect.objectContaining({ code: "cgroup_unavailable", message: "no cgroups for commands: not root" }),
    );
    const empty = makeTempDir("agentd-cgroups-");
    expect(() => CommandCgroups.open({ kind: "v2", ownDir: join(empty, "missing") })).toThrow(
      expect.objectContaining({ code: "cgroup_unavailable", message: expect.stringContaining("is not a cgroup2 directory") }),
    );
    const { own } = fakeV2Tree();
    expect(() => CommandCgroups.open({ kind: "v2", ownDir: own }, { subtreeName: ".." })).toThrow(
      expect.objectContaining({ code: "internal_error" }),
    );
  });

  test("the executor: an existing directory is an error unless reused; an absent optional file skipped; tolerated errors ignored", () => {
    const root = makeTempDir("agentd-cgroups-");
    const created: string[] = [];
    runOps(
      [
        { op: "mkdir", path: join(root, "a") },
        { op: "mkdir", path: join(root, "a"), existingOk: true },
        { op: "write", path: join(root, "a", "absent"), value: "0", ifExists: true },
        // Writing into a missing directory fails with ENOENT: tolerated here.
        { op: "write", path: join(root, "nowhere", "x"), value: "1", tolerate: ["ENOENT"] },
      ],
      created,
    );
    expect(created).toEqual([join(root, "a")]);
    expect(existsSync(join(root, "a", "absent"))).toBe(false);
    expect(() => runOps([{ op: "mkdir", path: join(root, "a") }])).toThrow(
      expect.objectContaining({ code: "cgroup_unavailable", message: `cannot create ${join(root, "a")}: EEXIST` }),
    );
  });
});
