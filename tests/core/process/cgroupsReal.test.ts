import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type CgroupLayout, CommandCgroups, detectCgroupLayout, type SessionCgroup } from "../../../src/core/process/cgroups/index.ts";
import { type KillTarget, killAndRemove } from "../../../src/core/process/cgroups/kill.ts";
import { readProcStat } from "../../../src/core/process/index.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../../support/waitFor.ts";

// Real cgroups: CI runs these as root on the same kind of host (hybrid: v1 pids/memory/cpu and a
// cgroup2 at /sys/fs/cgroup/unified). Missing root or cgroups fails them: they are the proof that
// a command session's cgroup holds a fork bomb and ends detached processes.

const SUBTREE = `agentd-test-${process.pid}`;
const DEAD_PID = 4_194_305; // Above PID_MAX_LIMIT: never alive, so its instance is a dead agentd's.
const LIMITS = { pidsMax: 64, memoryMaxBytes: 256 * 1_048_576, cpuWeight: 50 };

type UsableLayout = Exclude<CgroupLayout, { kind: "none" }>;
let layout: UsableLayout;
const opened: CommandCgroups[] = [];
const children: Array<{ pid: number; exited: Promise<number> }> = [];
/** Extra cgroup directories a test made by hand, swept after it. */
const extraDirs: KillTarget[] = [];

function usableLayout(): UsableLayout {
  if (process.getuid?.() !== 0) throw new Error("the real cgroup tests need root (CI runs them as root); run `bun test` as root");
  const detected = detectCgroupLayout();
  if (detected.kind === "none") throw new Error(`the real cgroup tests need writable cgroups, and there are none: ${detected.why}`);
  return detected;
}

/** The killing (cgroup2) directory of agentd's own cgroup, and every hierarchy's own directory. */
function ownDirs(): { killing?: string; all: string[] } {
  if (layout.kind === "v2") return { killing: layout.ownDir, all: [layout.ownDir] };
  const killing = layout.unified?.ownDir;
  return { killing, all: [...(killing ? [killing] : []), ...layout.v1.map((hierarchy) => hierarchy.ownDir)] };
}

/** The test's whole subtree in every hierarchy, as one thing to kill and remove. */
function subtreeTarget(): KillTarget {
  const { killing, all } = ownDirs();
  const dirs = all.map((dir) => join(dir, SUBTREE));
  return killing ? { dirs, killFile: join(killing, SUBTREE, "cgroup.kill") } : { dirs };
}

function open(): CommandCgroups {
  const cgroups = CommandCgroups.open(layout, { subtreeName: SUBTREE });
  opened.push(cgroups);
  return cgroups;
}

/** Starts `script` under bash in the cgroups whose cgroup.procs are given, joining them as the spawner's child does. */
function startIn(procsPaths: readonly string[], script: string) {
  const child = Bun.spawn(["sh", "-c", 'for f in "$@"; do echo 0 > "$f" || exit 111; done; exec bash -c "$0"', script, ...procsPaths], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
  });
  children.push(child);
  return child;
}

function sessionDirs(session: SessionCgroup): string[] {
  return session.procsPaths.map((path) => dirname(path));
}

/** A file of the session's in whichever hierarchy has it (pids.max in the pids one…). */
function sessionFile(session: SessionCgroup, name: string): string {
  const found = sessionDirs(session)
    .map((dir) => join(dir, name))
    .find((path) => existsSync(path));
  if (!found) throw new Error(`no ${name} in ${sessionDirs(session).join(", ")}`);
  return found;
}

/** Every process on the host whose cgroup (any hierarchy) lies in the test's subtree. */
function processesInSubtree(): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cgroup`, "utf8").includes(`/${SUBTREE}`) && isProcessAlive(Number(name))) found.push(Number(name));
    } catch {
      // Ended while listing.
    }
  }
  return found;
}

const FORK_BOMB = "bomb() { bomb | bomb & }; bomb; sleep 600";

beforeAll(() => {
  layout = usableLayout();
});

afterEach(async () => {
  for (const child of children.splice(0)) {
    try {
      process.kill(child.pid, "SIGKILL");
    } catch {
      // Already ended (the usual case: the test killed its cgroup).
    }
  }
  for (const cgroups of opened.splice(0)) await cgroups.closeAll();
  const leftovers = [subtreeTarget(), ...extraDirs.splice(0)];
  const swept = await Promise.all(leftovers.map((target) => killAndRemove(target, 5000)));
  removeTempDirs();
  expect({ swept, dirsLeft: leftovers.flatMap((target) => target.dirs).filter((dir) => existsSync(dir)) }).toEqual({
    swept: swept.map(() => true),
    dirsLeft: [],
  });
});

afterAll(() => {
  expect(processesInSubtree()).toEqual([]);
});

describe("command cgroups on this host (root)", () => {
  test("a session gets its limits; a bash that joins it is listed, and kill() ends it and removes the cgroups", async () => {
    const cgroups = open();
    expect(cgroups.kind).toBe(layout.kind);
    expect(cgroups.controllers).toEqual(
      layout.kind === "hybrid" ? layout.v1.map((hierarchy) => hierarchy.controller) : cgroups.controllers,
    );
    const session = cgroups.create("limits1", LIMITS);
    expect(session.procsPaths.every((path) => path.endsWith(`/${SUBTREE}/p${process.pid}/s-limits1/cgroup.procs`))).toBe(true);
    if (cgroups.kind === "hybrid") {
      expect(readFileSync(sessionFile(session, "pids.max"), "utf8").trim()).toBe("64");
      expect(readFileSync(sessionFile(session, "memory.limit_in_bytes"), "utf8").trim()).toBe(String(LIMITS.memoryMaxBytes));
      expect(readFileSync(sessionFile(session, "cpu.shares"), "utf8").trim()).toBe("512");
    } else {
      expect(readFileSync(sessionFile(session, "pids.max"), "utf8").trim()).toBe("64");
      expect(readFileSync(sessionFile(session, "cpu.weight"), "utf8").trim()).toBe("50");
    }

    const bash = startIn(session.procsPaths, "sleep 600");
    // The shell joins the hierarchies one after another: the session lists it from the first, the test waits for the last.
    const inEvery = () => session.procsPaths.every((path) => readFileSync(path, "utf8").split("\n").includes(String(bash.pid)));
    await waitFor("the bash to join every hierarchy of its session", inEvery);
    expect(session.pids()).toContain(bash.pid);

    expect(await session.kill()).toBe(true);
    expect(await bash.exited).toBe(137);
    expect(bash.signalCode).toBe("SIGKILL");
    expect(session.pids()).toEqual([]);
    expect(sessionDirs(session).filter((dir) => existsSync(dir))).toEqual([]);
    expect(await session.kill()).toBe(true);
  }, 30_000);

  test("a fork bomb is held at pids.max, agentd (this process) lives and can still fork; kill() ends every process of it", async () => {
    const cgroups = open();
    const session = cgroups.create("bomb", LIMITS);
    const bomb = startIn(session.procsPaths, FORK_BOMB);
    const started = performance.now();
    const events = sessionFile(session, "pids.events");
    await waitFor("the bomb to hit pids.max", () => Number(/max (\d+)/.exec(readFileSync(events, "utf8"))?.[1] ?? 0) > 0, {
      timeoutMs: 10_000,
    });
    await Bun.sleep(Math.max(0, 1000 - (performance.now() - started)));

    const current = Number(readFileSync(sessionFile(session, "pids.current"), "utf8"));
    expect(current).toBeGreaterThan(32);
    expect(current).toBeLessThanOrEqual(64);
    expect(session.pids().length).toBeGreaterThan(8);
    // Outside the session, forks still work.
    expect(Bun.spawnSync(["true"]).exitCode).toBe(0);

    expect(await session.kill()).toBe(true);
    expect(session.pids()).toEqual([]);
    expect(sessionDirs(session).filter((dir) => existsSync(dir))).toEqual([]);
    expect(processesInSubtree()).toEqual([]);
    expect(await bomb.exited).toBe(137);
    expect(isProcessAlive(process.pid)).toBe(true);
  }, 30_000);

  test("a double-forked, setsid'd child outlives the session's shell but not the session's kill()", async () => {
    const cgroups = open();
    const session = cgroups.create("detach", LIMITS);
    const pidFile = join(makeTempDir("agentd-cgroups-"), "detached.pid");
    const shell = startIn(session.procsPaths, `(setsid sh -c 'echo $$ > "$0"; exec sleep 600' "${pidFile}" &); sleep 600`);
    const detached = await waitFor("the detached child's pid", () => {
      const text = existsSync(pidFile) ? readFileSync(pidFile, "utf8").trim() : "";
      return text === "" ? undefined : Number(text);
    });
    await waitFor("the detached child to be in the session", () => session.pids().includes(detached));
    const stat = readProcStat(detached);
    expect(stat?.ppid).not.toBe(shell.pid);
    expect(readFileSync(`/proc/${detached}/stat`, "utf8").split(") ")[1]?.split(" ")[3]).toBe(String(detached)); // Its own session.

    // The shell ends first (the PTY's command exiting): the detached child stays, still in the cgroup.
    process.kill(shell.pid, "SIGKILL");
    await shell.exited;
    expect(isProcessAlive(detached)).toBe(true);
    expect(session.pids()).toEqual([detached]);

    expect(await session.kill()).toBe(true);
    await waitFor("the detached child to be gone", () => !isProcessAlive(detached), { timeoutMs: 5000 });
    expect(sessionDirs(session).filter((dir) => existsSync(dir))).toEqual([]);
  }, 30_000);

  test("a command over memory.max is killed by the kernel, not agentd", async () => {
    const cgroups = open();
    const session = cgroups.create("memory", { ...LIMITS, memoryMaxBytes: 32 * 1_048_576 });
    // dd touches its whole 200 MiB buffer.
    const hog = startIn(session.procsPaths, "exec dd if=/dev/zero of=/dev/null bs=200M count=1");
    expect(await hog.exited).toBe(137);
    expect(await session.kill()).toBe(true);
  }, 30_000);

  test("without cgroup.kill (Linux < 5.14), SIGKILL by listing still empties a fork bomb's cgroups", async () => {
    const cgroups = open();
    const session = cgroups.create("nokill", LIMITS);
    startIn(session.procsPaths, FORK_BOMB);
    const events = sessionFile(session, "pids.events");
    await waitFor("the bomb to hit pids.max", () => Number(/max (\d+)/.exec(readFileSync(events, "utf8"))?.[1] ?? 0) > 0, {
      timeoutMs: 10_000,
    });
    expect(await killAndRemove({ dirs: sessionDirs(session) })).toBe(true);
    expect(sessionDirs(session).filter((dir) => existsSync(dir))).toEqual([]);
    expect(processesInSubtree()).toEqual([]);
    expect(await session.kill()).toBe(true);
  }, 30_000);

  test("open removes a dead agentd's instance, killing what still ran in it", async () => {
    open();
    const { all } = ownDirs();
    const deadDirs = all.map((dir) => join(dir, SUBTREE, `p${DEAD_PID}`, "s-left"));
    for (const dir of deadDirs) mkdirSync(dir, { recursive: true });
    extraDirs.push({ dirs: all.map((dir) => join(dir, SUBTREE, `p${DEAD_PID}`)) });
    const left = startIn(
      deadDirs.map((dir) => join(dir, "cgroup.procs")),
      "sleep 600",
    );
    await waitFor("the leftover to be in the dead instance", () =>
      readFileSync(join(deadDirs[0]!, "cgroup.procs"), "utf8").includes(String(left.pid)),
    );

    open();
    expect(await left.exited).toBe(137);
    expect(deadDirs.map((dir) => dirname(dir)).filter((dir) => existsSync(dir))).toEqual([]);
  }, 30_000);

  test("a session whose cgroups cannot all be made leaves none behind, and says which failed", async () => {
    const cgroups = open();
    const probe = cgroups.create("probe", LIMITS);
    const instances = sessionDirs(probe).map((dir) => dirname(dir));
    expect(await probe.kill()).toBe(true);
    // The last hierarchy's instance directory goes missing: creating the session there fails.
    const last = instances.at(-1)!;
    expect(Bun.spawnSync(["rmdir", last]).exitCode).toBe(0);
    expect(() => cgroups.create("half", LIMITS)).toThrow(
      expect.objectContaining({ code: "cgroup_unavailable", message: `cannot create ${join(last, "s-half")}: ENOENT` }),
    );
    expect(instances.map((dir) => join(dir, "s-half")).filter((dir) => existsSync(dir))).toEqual([]);
  });
});

describe("v2 move to a leaf, on this host's real cgroup2 hierarchy", () => {
  test("agentd's processes move into daemon/; sessions under it are killed with cgroup.kill", async () => {
    const { killing } = ownDirs();
    if (!killing) throw new Error("this host has no cgroup2 hierarchy (unified) to test the v2 path on");
    const own = join(killing, `${SUBTREE}-v2`);
    mkdirSync(own);
    extraDirs.push({ dirs: [own], killFile: join(own, "cgroup.kill") });
    // Stands for agentd's own processes in its cgroup.
    const resident = startIn([join(own, "cgroup.procs")], "sleep 600");
    await waitFor("the resident to be in the cgroup", () => readFileSync(join(own, "cgroup.procs"), "utf8").includes(String(resident.pid)));

    const cgroups = CommandCgroups.open({ kind: "v2", ownDir: own }, { subtreeName: "commands" });
    opened.push(cgroups);
    expect(readFileSync(join(own, "cgroup.procs"), "utf8")).toBe("");
    expect(readFileSync(join(own, "daemon", "cgroup.procs"), "utf8").trim()).toBe(String(resident.pid));
    expect(readFileSync(`/proc/${resident.pid}/cgroup`, "utf8")).toContain(`/${SUBTREE}-v2/daemon\n`);

    const session = cgroups.create("v2", LIMITS);
    expect(session.procsPaths).toEqual([join(own, "commands", `p${process.pid}`, "s-v2", "cgroup.procs")]);
    // No fork bomb here: this hierarchy may have no pids controller to hold it.
    const shell = startIn(session.procsPaths, "(setsid sleep 600 &); sleep 600 & sleep 600 & wait");
    await waitFor("the command and its children to run", () => session.pids().length >= 4);
    expect(await session.kill()).toBe(true);
    expect(await shell.exited).toBe(137);
    expect(isProcessAlive(resident.pid)).toBe(true);
    await cgroups.closeAll();
    expect(existsSync(join(own, "commands"))).toBe(false);
  }, 30_000);
});
