import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ToolOutputStore } from "../../src/pty/toolOutputStore.ts";

let directory: string;

beforeEach(() => {
  directory = join(mkdtempSync(join(tmpdir(), "agentd-tool-output-")), "tool-output");
});

afterEach(() => {
  rmSync(join(directory, ".."), { recursive: true, force: true });
});

describe("ToolOutputStore", () => {
  test("saves the full bytes in a private file", async () => {
    const store = new ToolOutputStore(directory, { maxBytes: 1_000_000, maxAgeMs: 86_400_000 });
    const path = await store.save("abc123", new TextEncoder().encode("full output"));
    expect(path.startsWith(directory)).toBe(true);
    expect(path).toContain("pty-abc123-");
    expect(readFileSync(path, "utf8")).toBe("full output");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(directory).mode & 0o777).toBe(0o700);
  });

  test("deletes files older than the age limit", async () => {
    const store = new ToolOutputStore(directory, { maxBytes: 1_000_000, maxAgeMs: 60_000 });
    const old = await store.save("old", new Uint8Array(10));
    const twoMinutesAgo = new Date(Date.now() - 120_000);
    utimesSync(old, twoMinutesAgo, twoMinutesAgo);
    const fresh = await store.save("fresh", new Uint8Array(10));
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });

  test("keeps the directory within its size limit, oldest out first, the new file always kept", async () => {
    const store = new ToolOutputStore(directory, { maxBytes: 250, maxAgeMs: 86_400_000 });
    const saveAged = async (id: string, size: number, ageMs: number) => {
      const path = await store.save(id, new Uint8Array(size));
      const stamp = new Date(Date.now() - ageMs);
      utimesSync(path, stamp, stamp);
      return path;
    };
    const oldest = await saveAged("s0", 100, 20_000);
    const older = await saveAged("s1", 100, 10_000);
    const newest = await store.save("s2", new Uint8Array(100));
    expect([existsSync(oldest), existsSync(older), existsSync(newest)]).toEqual([false, true, true]);
    const big = await store.save("big", new Uint8Array(400));
    expect(readdirSync(directory)).toEqual([big.slice(directory.length + 1)]);
  });
});
