import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createLocalFiles } from "../../src/files/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

test("agentd's own files are refused to the file tools by path, through a link, a linked directory, append and create_dirs", async () => {
  const root = makeTempDir("agentd-own-");
  const data = join(root, "data");
  const work = join(root, "work");
  mkdirSync(data);
  mkdirSync(work);
  writeFileSync(join(data, "token"), "secret");
  symlinkSync(join(data, "token"), join(work, "token-link"));
  symlinkSync(data, join(work, "data-link"));
  const files = createLocalFiles([data]);
  const refused = async (promise: Promise<unknown>) => {
    const error = (await promise.then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: string } | undefined;
    return error?.code;
  };
  expect(await refused(files.read({ path: join(data, "token") }))).toBe("path_protected");
  expect(await refused(files.read({ path: join(work, "token-link") }))).toBe("path_protected");
  expect(await refused(files.read({ path: join(work, "data-link", "token") }))).toBe("path_protected");
  expect(await refused(files.write({ path: join(work, "token-link"), content: "x" }))).toBe("path_protected");
  expect(await refused(files.write({ path: join(work, "data-link", "new"), content: "x" }))).toBe("path_protected");
  expect(await refused(files.write({ path: join(data, "token"), content: "x", append: true }))).toBe("path_protected");
  expect(await refused(files.write({ path: join(data, "sub", "deeper", "f"), content: "x", create_dirs: true }))).toBe("path_protected");
  expect(readFileSync(join(data, "token"), "utf8")).toBe("secret");
  // Everything else still works, links included.
  await files.write({ path: join(work, "plain"), content: "hello" });
  symlinkSync(join(work, "plain"), join(work, "plain-link"));
  await files.write({ path: join(work, "plain-link"), content: "through the link" });
  expect((await files.read({ path: join(work, "plain") })).content).toBe("through the link");
  await files.write({ path: join(work, "plain"), content: "!", append: true });
  expect(readFileSync(join(work, "plain"), "utf8")).toBe("through the link!");
  rmSync(join(work, "plain-link"));
});
