import { describe, expect, test } from "bun:test";
import {
  cpuShares,
  layoutFromProc,
  parseCgroupMounts,
  parseProcCgroup,
  planSession,
  planTree,
} from "../../../src/core/process/cgroups/index.ts";

// A systemd host on cgroup v2 only (Debian 12, Ubuntu 22.04+, Fedora).
const V2_MOUNTINFO = `22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
26 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
28 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
`;
const V2_CGROUP = "0::/system.slice/agentd.service\n";

// A systemd hybrid host (Ubuntu 20.04): v1 controllers, cpu co-mounted with cpuacct, a controller-less cgroup2.
const HYBRID_MOUNTINFO = `25 22 0:22 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
27 25 0:24 / /sys/fs/cgroup/systemd rw,nosuid,nodev,noexec,relatime shared:11 - cgroup cgroup rw,xattr,name=systemd
30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,cpu,cpuacct
31 25 0:28 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,pids
34 25 0:31 / /sys/fs/cgroup/cpuset rw,nosuid,nodev,noexec,relatime shared:18 - cgroup cgroup rw,cpuset
35 25 0:32 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:19 - cgroup cgroup rw,memory
`;
const HYBRID_CGROUP = `12:pids:/system.slice/agentd.service
8:cpuset:/
5:memory:/system.slice/agentd.service
3:cpu,cpuacct:/system.slice/agentd.service
1:name=systemd:/system.slice/agentd.service
0::/system.slice/agentd.service
`;

const LIMITS = { pidsMax: 64, memoryMaxBytes: 256 * 1_048_576, cpuWeight: 50 };

describe("parsing /proc/self/mountinfo and /proc/self/cgroup", () => {
  test("the cgroup mounts with their roots and options; other mounts are left out; escaped paths decoded", () => {
    expect(parseCgroupMounts(HYBRID_MOUNTINFO).map((mount) => [mount.fstype, mount.mountPoint, mount.superOptions.join(",")])).toEqual([
      ["cgroup2", "/sys/fs/cgroup/unified", "rw,nsdelegate"],
      ["cgroup", "/sys/fs/cgroup/systemd", "rw,xattr,name=systemd"],
      ["cgroup", "/sys/fs/cgroup/cpu,cpuacct", "rw,cpu,cpuacct"],
      ["cgroup", "/sys/fs/cgroup/pids", "rw,pids"],
      ["cgroup", "/sys/fs/cgroup/cpuset", "rw,cpuset"],
      ["cgroup", "/sys/fs/cgroup/memory", "rw,memory"],
    ]);
    const escaped = parseCgroupMounts("40 31 0:38 /a\\040b /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n");
    expect(escaped).toEqual([{ fstype: "cgroup2", root: "/a b", mountPoint: "/mnt/cg two", superOptions: ["rw"] }]);
  });

  test("/proc/self/cgroup lines: id, controllers, a path that may hold colons", () => {
    expect(parseProcCgroup("3:cpu,cpuacct:/a\n0::/b:c\n\n")).toEqual([
      { hierarchyId: 3, controllers: ["cpu", "cpuacct"], path: "/a" },
      { hierarchyId: 0, controllers: [], path: "/b:c" },
    ]);
  });

  test("pure v2: agentd's own cgroup under the cgroup2 mount", () => {
    expect(layoutFromProc(V2_MOUNTINFO, V2_CGROUP)).toEqual({ kind: "v2", ownDir: "/sys/fs/cgroup/system.slice/agentd.service" });
  });

  test("pure v2 with agentd already in its daemon leaf: the cgroup above, which agentd set up", () => {
    expect(layoutFromProc(V2_MOUNTINFO, "0::/system.slice/agentd.service/daemon\n")).toEqual({
      kind: "v2",
      ownDir: "/sys/fs/cgroup/system.slice/agentd.service",
    });
  });

  test("hybrid never moved agentd to a daemon leaf: a unified cgroup named daemon is taken as it is", () => {
    const layout = layoutFromProc(HYBRID_MOUNTINFO, HYBRID_CGROUP.replace("0::/system.slice/agentd.service", "0::/x/daemon"));
    expect(layout).toMatchObject({ kind: "hybrid", unified: { ownDir: "/sys/fs/cgroup/unified/x/daemon" } });
  });

  test("a container's cgroup namespace (own path /) and an old container's mount of its own sub-cgroup", () => {
    expect(layoutFromProc(V2_MOUNTINFO, "0::/\n")).toEqual({ kind: "v2", ownDir: "/sys/fs/cgroup" });
    const bound = "50 40 0:30 /docker/abc /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n";
    expect(layoutFromProc(bound, "7:pids:/docker/abc\n")).toEqual({
      kind: "hybrid",
      v1: [{ controller: "pids", ownDir: "/sys/fs/cgroup/pids" }],
    });
    expect(layoutFromProc(bound, "7:pids:/docker/abc/inner\n")).toEqual({
      kind: "hybrid",
      v1: [{ controller: "pids", ownDir: "/sys/fs/cgroup/pids/inner" }],
    });
  });

  test("hybrid: pids, memory, cpu from their v1 mounts (cpu co-mounted), the unified cgroup2 for cgroup.kill", () => {
    expect(layoutFromProc(HYBRID_MOUNTINFO, HYBRID_CGROUP)).toEqual({
      kind: "hybrid",
      v1: [
        { controller: "pids", ownDir: "/sys/fs/cgroup/pids/system.slice/agentd.service" },
        { controller: "memory", ownDir: "/sys/fs/cgroup/memory/system.slice/agentd.service" },
        { controller: "cpu", ownDir: "/sys/fs/cgroup/cpu,cpuacct/system.slice/agentd.service" },
      ],
      unified: { ownDir: "/sys/fs/cgroup/unified/system.slice/agentd.service" },
    });
  });

  test("hybrid as on this kind of machine: different own paths per hierarchy, root for some", () => {
    const mountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`;
    const cgroup = "8:pids:/\n4:memory:/process_api/aa77\n1:cpu:/\n0::/\n";
    expect(layoutFromProc(mountinfo, cgroup)).toEqual({
      kind: "hybrid",
      v1: [
        { controller: "pids", ownDir: "/sys/fs/cgroup/pids" },
        { controller: "memory", ownDir: "/sys/fs/cgroup/memory/process_api/aa77" },
        { controller: "cpu", ownDir: "/sys/fs/cgroup/cpu" },
      ],
      unified: { ownDir: "/sys/fs/cgroup/unified" },
    });
  });

  test("none: no cgroup mount, no 0:: line, a path outside every mount", () => {
    expect(layoutFromProc("28 1 8:1 / / rw - ext4 /dev/sda1 rw\n", V2_CGROUP)).toEqual({
      kind: "none",
      why: "no cgroup filesystem is mounted",
    });
    expect(layoutFromProc(V2_MOUNTINFO, "")).toEqual({ kind: "none", why: "/proc/self/cgroup has no cgroup2 (0::) line" });
    expect(layoutFromProc(V2_MOUNTINFO, "0::/../../outside\n")).toMatchObject({ kind: "none", why: expect.stringContaining("outside") });
    const onlySystemd = "27 25 0:24 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n";
    expect(layoutFromProc(onlySystemd, "1:name=systemd:/x\n")).toMatchObject({ kind: "none" });
  });
});

describe("planning", () => {
  const names = { subtree: "commands", instance: "p77" };
  const own = "/cg/system.slice/agentd.service";

  test("v2: agentd's processes move to a leaf, then each level enables the controllers its parent delegates", () => {
    const { ops, tree } = planTree({ kind: "v2", ownDir: own }, names, {
      available: ["cpuset", "cpu", "io", "memory", "pids"],
      hasProcs: true,
      realRoot: false,
    });
    expect(ops).toEqual([
      { op: "mkdir", path: `${own}/daemon`, existingOk: true },
      { op: "moveProcs", from: `${own}/cgroup.procs`, to: `${own}/daemon/cgroup.procs` },
      { op: "write", path: `${own}/cgroup.subtree_control`, value: "+pids +memory +cpu" },
      { op: "mkdir", path: `${own}/commands`, existingOk: true },
      { op: "write", path: `${own}/commands/cgroup.subtree_control`, value: "+pids +memory +cpu" },
      { op: "mkdir", path: `${own}/commands/p77`, existingOk: true },
      { op: "write", path: `${own}/commands/p77/cgroup.subtree_control`, value: "+pids +memory +cpu" },
    ]);
    expect(tree).toEqual({
      kind: "v2",
      hierarchies: [{ role: "v2", instanceDir: `${own}/commands/p77` }],
      controllers: ["pids", "memory", "cpu"],
    });
  });

  test("v2: the real root keeps its processes (exempt); only delegated controllers; none delegated enables none", () => {
    const root = planTree({ kind: "v2", ownDir: "/cg" }, names, { available: ["memory", "pids"], hasProcs: true, realRoot: true });
    expect(root.ops.map((op) => op.op)).toEqual(["write", "mkdir", "write", "mkdir", "write"]);
    expect(root.ops[0]).toEqual({ op: "write", path: "/cg/cgroup.subtree_control", value: "+pids +memory" });
    expect(root.tree.controllers).toEqual(["pids", "memory"]);
    const bare = planTree({ kind: "v2", ownDir: own }, names, { available: [""], hasProcs: false, realRoot: false });
    expect(bare.ops).toEqual([
      { op: "mkdir", path: `${own}/commands`, existingOk: true },
      { op: "mkdir", path: `${own}/commands/p77`, existingOk: true },
    ]);
  });

  test("hybrid: the subtree and instance in the unified hierarchy and each v1 one, the killing one first", () => {
    const { ops, tree } = planTree(
      {
        kind: "hybrid",
        v1: [
          { controller: "pids", ownDir: "/p" },
          { controller: "memory", ownDir: "/m/x" },
        ],
        unified: { ownDir: "/u" },
      },
      { subtree: "agentd-commands", instance: "p77" },
    );
    expect(ops).toEqual([
      { op: "mkdir", path: "/u/agentd-commands", existingOk: true },
      { op: "mkdir", path: "/u/agentd-commands/p77", existingOk: true },
      { op: "mkdir", path: "/p/agentd-commands", existingOk: true },
      { op: "mkdir", path: "/p/agentd-commands/p77", existingOk: true },
      { op: "mkdir", path: "/m/x/agentd-commands", existingOk: true },
      { op: "mkdir", path: "/m/x/agentd-commands/p77", existingOk: true },
    ]);
    expect(tree.hierarchies.map((hierarchy) => hierarchy.role)).toEqual(["unified", "pids", "memory"]);
    expect(tree.controllers).toEqual(["pids", "memory"]);
  });

  test("a v2 session: its directory, pids.max, memory.max, no swap where the file exists, cpu.weight", () => {
    const tree = {
      kind: "v2" as const,
      hierarchies: [{ role: "v2" as const, instanceDir: "/i" }],
      controllers: ["pids", "memory", "cpu"] as const,
    };
    expect(planSession(tree, "ab12", LIMITS)).toEqual({
      ops: [
        { op: "mkdir", path: "/i/s-ab12" },
        { op: "write", path: "/i/s-ab12/pids.max", value: "64" },
        { op: "write", path: "/i/s-ab12/memory.max", value: "268435456" },
        { op: "write", path: "/i/s-ab12/memory.swap.max", value: "0", ifExists: true },
        { op: "write", path: "/i/s-ab12/cpu.weight", value: "50" },
      ],
      dirs: ["/i/s-ab12"],
      procsPaths: ["/i/s-ab12/cgroup.procs"],
      killFile: "/i/s-ab12/cgroup.kill",
    });
    expect(planSession({ ...tree, controllers: ["memory"] }, "x", LIMITS).ops.map((op) => ("path" in op ? op.path : op.op))).toEqual([
      "/i/s-x",
      "/i/s-x/memory.max",
      "/i/s-x/memory.swap.max",
    ]);
  });

  test("a hybrid session: one directory per hierarchy, v1 limit files, the unified cgroup.kill", () => {
    const tree = {
      kind: "hybrid" as const,
      hierarchies: [
        { role: "unified" as const, instanceDir: "/u/i" },
        { role: "pids" as const, instanceDir: "/p/i" },
        { role: "memory" as const, instanceDir: "/m/i" },
        { role: "cpu" as const, instanceDir: "/c/i" },
      ],
      controllers: ["pids", "memory", "cpu"] as const,
    };
    expect(planSession(tree, "ab12", LIMITS)).toEqual({
      ops: [
        { op: "mkdir", path: "/u/i/s-ab12" },
        { op: "mkdir", path: "/p/i/s-ab12" },
        { op: "write", path: "/p/i/s-ab12/pids.max", value: "64" },
        { op: "mkdir", path: "/m/i/s-ab12" },
        { op: "write", path: "/m/i/s-ab12/memory.limit_in_bytes", value: "268435456" },
        { op: "write", path: "/m/i/s-ab12/memory.memsw.limit_in_bytes", value: "268435456", ifExists: true, tolerate: ["EINVAL", "EPERM"] },
        { op: "mkdir", path: "/c/i/s-ab12" },
        { op: "write", path: "/c/i/s-ab12/cpu.shares", value: "512" },
      ],
      dirs: ["/u/i/s-ab12", "/p/i/s-ab12", "/m/i/s-ab12", "/c/i/s-ab12"],
      procsPaths: ["/u/i/s-ab12/cgroup.procs", "/p/i/s-ab12/cgroup.procs", "/m/i/s-ab12/cgroup.procs", "/c/i/s-ab12/cgroup.procs"],
      killFile: "/u/i/s-ab12/cgroup.kill",
    });
  });

  test("cpu.weight maps to cpu.shares (100 → 1024), clamped to 2..262144", () => {
    expect([1, 50, 100, 10_000].map(cpuShares)).toEqual([10, 512, 1024, 102_400]);
    expect(cpuShares(0)).toBe(2);
    expect(cpuShares(1_000_000)).toBe(262_144);
  });

  test("a session id that could climb out of the directory, or limits out of range, are refused", () => {
    const tree = { kind: "v2" as const, hierarchies: [{ role: "v2" as const, instanceDir: "/i" }], controllers: [] };
    for (const id of ["../x", "a/b", "", "x".repeat(65), "a b"]) {
      expect(() => planSession(tree, id, LIMITS)).toThrow(expect.objectContaining({ code: "internal_error" }));
    }
    for (const bad of [{ pidsMax: 0 }, { memoryMaxBytes: 1.5 }, { cpuWeight: 10_001 }, { pidsMax: Number.NaN }]) {
      expect(() => planSession(tree, "ok", { ...LIMITS, ...bad })).toThrow(expect.objectContaining({ code: "internal_error" }));
    }
  });
});
