import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CommandIdentity } from "../../src/core/process/identity/index.ts";
import type { ToolDefinition } from "../../src/core/tools/toolDefinition.ts";
import { createFilesCapability, createLocalFiles } from "../../src/files/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { addUser, deleteUser } from "../support/systemUsers.ts";

/** The file tools run as root, for a command user: only what that user could do itself goes through. Needs root. */
const USER = "agentd-files-test";
const isRoot = process.getuid?.() === 0;

function idOf(flag: "-u" | "-g"): number | undefined {
  const result = Bun.spawnSync(["id", flag, USER], { stdout: "pipe", stderr: "ignore" });
  return result.exitCode === 0 ? Number(result.stdout.toString().trim()) : undefined;
}

let made = false;
let identity: CommandIdentity;
let uid = -1;
let gid = -1;
let root = "";
let mine = "";

beforeAll(() => {
  if (!isRoot) return;
  if (idOf("-u") === undefined) {
    made = addUser(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin"], USER);
  }
  uid = idOf("-u") ?? -1;
  gid = idOf("-g") ?? -1;
  identity = { mode: "command_user", user: USER, credentials: { uid, gid, groups: [gid] }, home: "/nonexistent", problems: [] };
  root = makeTempDir("agentd-cmdfiles-");
  chmodSync(root, 0o755);
  mine = join(root, "mine");
  mkdirSync(mine);
  chownSync(mine, uid, gid);
  mkdirSync(join(root, "secret"), { mode: 0o700 });
  writeFileSync(join(root, "secret", "plain"), "behind a closed door", { mode: 0o644 });
  mkdirSync(join(root, "rootdir"), { mode: 0o755 });
  writeFileSync(join(root, "rootdir", "readable"), "root's", { mode: 0o644 });
  writeFileSync(join(root, "rootdir", "private"), "root only", { mode: 0o600 });
});

afterAll(async () => {
  removeTempDirs();
  if (made) await deleteUser(USER);
});

const codeOf = async (promise: Promise<unknown>) => {
  const error = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as { code?: string; message?: string } | undefined;
  return error?.code;
};

describe.skipIf(!isRoot)("file tools for a command user", () => {
  test("reads: only what the user could read, judged on what was opened", async () => {
    const files = createLocalFiles([], identity);
    const refused = await files.read({ path: "/etc/shadow" }).catch((e: unknown) => e as { code: string; message: string });
    expect(refused).toMatchObject({ code: "file_permission_denied" });
    expect((refused as { message: string }).message).toStartWith(`Cannot read /etc/shadow as ${USER}: permission denied`);
    // A readable file in a directory the user cannot pass through.
    expect(await codeOf(files.read({ path: join(root, "secret", "plain") }))).toBe("file_permission_denied");
    expect(await codeOf(files.read({ path: join(root, "rootdir", "private") }))).toBe("file_permission_denied");
    // Links in the user's own directory lead nowhere it could not go.
    symlinkSync(join(root, "rootdir", "private"), join(mine, "to-private"));
    symlinkSync(join(root, "secret", "plain"), join(mine, "to-secret"));
    symlinkSync("/proc/self/environ", join(mine, "to-environ"));
    for (const name of ["to-private", "to-secret", "to-environ"])
      expect(await codeOf(files.read({ path: join(mine, name) }))).toBe("file_permission_denied");
    // What it may read, it reads.
    writeFileSync(join(mine, "note"), "mine");
    expect((await files.read({ path: join(mine, "note") })).content).toBe("mine");
    expect((await files.read({ path: join(root, "rootdir", "readable") })).content).toBe("root's");
    expect(await codeOf(files.read({ path: join(mine, "missing") }))).toBe("file_not_found");
  });

  test("writes: nowhere the user could not write; what is created is the user's", async () => {
    const files = createLocalFiles([], identity);
    expect(await codeOf(files.write({ path: "/etc/agentd-test-x", content: "x" }))).toBe("file_permission_denied");
    expect(existsSync("/etc/agentd-test-x")).toBe(false);
    expect(await codeOf(files.write({ path: "/etc/agentd-test-x", content: "x", append: true }))).toBe("file_permission_denied");
    expect(existsSync("/etc/agentd-test-x")).toBe(false);
    // A link in its own directory to a file in /etc: the directory written into is /etc.
    symlinkSync(join(root, "rootdir", "readable"), join(mine, "to-readable"));
    expect(await codeOf(files.write({ path: join(mine, "to-readable"), content: "x" }))).toBe("file_permission_denied");
    // A dangling link is not created through (append would): it is replaced, in the user's directory, by the user's file.
    symlinkSync("/etc/agentd-test-y", join(mine, "to-etc"));
    expect(await codeOf(files.write({ path: join(mine, "to-etc"), content: "x", append: true }))).toBe("file_permission_denied");
    expect(existsSync("/etc/agentd-test-y")).toBe(false);
    await files.write({ path: join(mine, "to-etc"), content: "x" });
    expect(existsSync("/etc/agentd-test-y")).toBe(false);
    expect(lstatSync(join(mine, "to-etc"))).toMatchObject({ uid, gid });
    expect(lstatSync(join(mine, "to-etc")).isFile()).toBe(true);

    const created = await files.write({ path: join(mine, "new.txt"), content: "hello" });
    expect(created.created).toBe(true);
    expect(statSync(join(mine, "new.txt"))).toMatchObject({ uid, gid });
    await files.write({ path: join(mine, "appended.txt"), content: "a", append: true });
    expect(statSync(join(mine, "appended.txt"))).toMatchObject({ uid, gid });
    await files.write({ path: join(mine, "appended.txt"), content: "b", append: true });
    expect(readFileSync(join(mine, "appended.txt"), "utf8")).toBe("ab");

    await files.write({ path: join(mine, "a", "b", "c.txt"), content: "deep", create_dirs: true });
    for (const path of [join(mine, "a"), join(mine, "a", "b"), join(mine, "a", "b", "c.txt")])
      expect(statSync(path)).toMatchObject({ uid, gid });
    expect(await codeOf(files.write({ path: join(root, "rootdir", "x", "y.txt"), content: "x", create_dirs: true }))).toBe(
      "file_permission_denied",
    );
    expect(existsSync(join(root, "rootdir", "x"))).toBe(false);

    // Root's file in root's directory: refused, untouched.
    const readable = join(root, "rootdir", "readable");
    expect(await codeOf(files.write({ path: readable, content: "x" }))).toBe("file_permission_denied");
    expect(await codeOf(files.write({ path: readable, content: "x", append: true }))).toBe("file_permission_denied");
    expect(readFileSync(readable, "utf8")).toBe("root's");
    // Root's file in the user's directory: not writable by it either.
    writeFileSync(join(mine, "roots"), "root's", { mode: 0o644 });
    expect(await codeOf(files.write({ path: join(mine, "roots"), content: "x" }))).toBe("file_permission_denied");
    expect(readFileSync(join(mine, "roots"), "utf8")).toBe("root's");
  });

  test("existing files it may write keep their owner; set-id bits go as a write would drop them; sticky dirs are rewritten in place", async () => {
    const files = createLocalFiles([], identity);
    const setuid = join(mine, "setuid");
    writeFileSync(setuid, "old");
    chmodSync(setuid, 0o4777);
    await files.write({ path: setuid, content: "new" });
    expect(statSync(setuid)).toMatchObject({ uid: 0, gid: 0 });
    expect(statSync(setuid).mode & 0o7777).toBe(0o777);

    const sticky = join(root, "sticky");
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    const shared = join(sticky, "shared");
    writeFileSync(shared, "old");
    chmodSync(shared, 0o666);
    const inode = statSync(shared).ino;
    await files.write({ path: shared, content: "rewritten" });
    expect(statSync(shared)).toMatchObject({ ino: inode, uid: 0 });
    expect(readFileSync(shared, "utf8")).toBe("rewritten");
    // Another's dangling link in a sticky directory is not the user's to replace.
    symlinkSync(join(sticky, "nowhere"), join(sticky, "dangling"));
    expect(await codeOf(files.write({ path: join(sticky, "dangling"), content: "x" }))).toBe("file_permission_denied");
  });

  test("through the capability: /api/files and read_file answer 403 / refuse", async () => {
    const capability = createFilesCapability({ readFileMaxBytes: 1 << 20, ownPaths: [], identity });
    const app = capability.routes?.[0]?.app;
    const response = await app?.request("/read", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ path: "/etc/shadow" }),
    });
    expect(response?.status).toBe(403);
    expect(await response?.text()).toContain("file_permission_denied");
    const readTool = capability.tools?.find((tool) => tool.name === "read_file") as ToolDefinition;
    const writeTool = capability.tools?.find((tool) => tool.name === "write_file") as ToolDefinition;
    const ctx = {} as Parameters<ToolDefinition["execute"]>[1];
    expect(await codeOf(readTool.execute({ path: "/etc/shadow", offset: 1, limit: 10 }, ctx))).toBe("file_permission_denied");
    expect(await codeOf(writeTool.execute({ path: "/etc/agentd-test-x", content: "x", create_dirs: false }, ctx))).toBe(
      "file_permission_denied",
    );
    expect(existsSync("/etc/agentd-test-x")).toBe(false);
    await writeTool.execute({ path: join(mine, "tool.txt"), content: "by tool", create_dirs: false }, ctx);
    expect(statSync(join(mine, "tool.txt"))).toMatchObject({ uid, gid });
    await capability.close?.();
  });

  test("the kernel agrees: what the tools read for the user is what the user itself can cat", async () => {
    const files = createLocalFiles([], identity);
    symlinkSync(join(root, "rootdir", "readable"), join(mine, "to-readable-2"));
    const paths = ["/etc/shadow", "/etc/hostname", "/root/.bashrc"].concat(
      ["secret/plain", "rootdir/private", "rootdir/readable", "mine/note", "mine/to-private", "mine/to-readable-2"].map((p) =>
        join(root, p),
      ),
    );
    for (const path of paths) {
      const cat = Bun.spawnSync(["setpriv", `--reuid=${uid}`, `--regid=${gid}`, "--clear-groups", "--", "cat", path], {
        stdout: "ignore",
        stderr: "ignore",
      });
      const ours = await files.read({ path }).then(
        () => true,
        () => false,
      );
      expect({ path, ours }).toEqual({ path, ours: cat.exitCode === 0 });
    }
  });

  test("unguarded (or no identity): as before, root reads and writes what root can", async () => {
    for (const files of [createLocalFiles([], { mode: "unguarded", problems: [] }), createLocalFiles([])]) {
      expect((await files.read({ path: join(root, "secret", "plain") })).content).toBe("behind a closed door");
      const path = join(root, "rootdir", `unguarded-${Math.random()}`);
      await files.write({ path, content: "x" });
      expect(statSync(path)).toMatchObject({ uid: 0 });
    }
  });
});
