import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createFileRoutes, createLocalFiles } from "../../src/files/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

const app = createFileRoutes(createLocalFiles([]));
const dir = makeTempDir("agentd-files-");
const post = async (path: string, body: unknown) => {
  const response = await app.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

afterAll(removeTempDirs);

describe("file API", () => {
  test("write then read text, with offset and truncation", async () => {
    const path = join(dir, "a.txt");
    expect((await post("/write", { path, content: "hello world" })).body).toEqual({ path, bytes_written: 11, size: 11, created: true });
    expect((await post("/read", { path })).body).toEqual({
      path,
      size: 11,
      offset: 0,
      bytes: 11,
      encoding: "utf8",
      content: "hello world",
      truncated: false,
    });
    expect((await post("/read", { path, offset: 6, max_bytes: 3 })).body).toMatchObject({ content: "wor", truncated: true });
    await post("/write", { path, content: "!", append: true });
    expect(readFileSync(path, "utf8")).toBe("hello world!");
  });

  test("binary content comes back as base64; replacing keeps the file's mode", async () => {
    const path = join(dir, "b.bin");
    writeFileSync(path, Buffer.from([0, 1, 2, 255]), { mode: 0o600 });
    expect((await post("/read", { path })).body).toMatchObject({ encoding: "base64", content: "AAEC/w==" });
    await post("/write", { path, content: "AAE=", encoding: "base64" });
    expect([...readFileSync(path)]).toEqual([0, 1]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  test("clear errors: missing file, directory, missing parent, bad body", async () => {
    expect(await post("/read", { path: join(dir, "nope") })).toMatchObject({ status: 404, body: { error: { code: "file_not_found" } } });
    expect(await post("/read", { path: dir })).toMatchObject({ status: 400, body: { error: { code: "file_is_directory" } } });
    expect(await post("/write", { path: join(dir, "x", "y.txt"), content: "" })).toMatchObject({
      status: 404,
      body: { error: { code: "directory_not_found" } },
    });
    expect((await post("/write", { path: join(dir, "x", "y.txt"), content: "deep", create_dirs: true })).status).toBe(200);
    expect(await post("/read", { paht: "x" })).toMatchObject({ status: 400, body: { error: { code: "invalid_request", param: "path" } } });
  });
});
