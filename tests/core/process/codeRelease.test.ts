import { afterAll, describe, expect, test } from "bun:test";
import type { LogFields, Logger } from "../../../src/core/log/index.ts";
import { cleanCodeMappings } from "../../../src/core/process/codeMappings.ts";
import { scheduleCodeRelease } from "../../../src/core/process/index.ts";
import { copyFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN } from "../../support/binary.ts";
import { importLine } from "../../support/probeScript.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";
import { waitFor } from "../../support/waitFor.ts";

afterAll(removeTempDirs);

const EXE = "/opt/agentd/agentd";

/** One mapping of /proc/<pid>/smaps, with the fields cleanCodeMappings reads. */
function mapping(range: string, perms: string, path: string, fields: Record<string, number>): string {
  const all = { Rss: 0, Private_Clean: 0, Private_Dirty: 0, Anonymous: 0, Swap: 0, ...fields };
  return [
    `${range} ${perms} 00000000 fd:01 1234567                    ${path}`.trimEnd(),
    `Size:              ${all.Rss} kB`,
    ...Object.entries(all).map(([name, kb]) => `${`${name}:`.padEnd(16)}${String(kb).padStart(8)} kB`),
    "VmFlags: rd ex mr mw me",
  ].join("\n");
}

describe("cleanCodeMappings", () => {
  test("takes the executable's clean read-only mappings: its code and its read-only data", () => {
    const smaps = [
      mapping("00200000-01a39000", "r--p", EXE, { Rss: 5348 }),
      mapping("01a40000-0684a000", "r-xp", EXE, { Rss: 31208 }),
      mapping("7f0000000000-7f0000100000", "r-xp", "/usr/lib/x86_64-linux-gnu/libc.so.6", { Rss: 1476 }),
    ].join("\n");
    expect(cleanCodeMappings(smaps, EXE)).toEqual([
      { start: 0x200000n, end: 0x1a39000n, rssKb: 5348 },
      { start: 0x1a40000n, end: 0x684a000n, rssKb: 31208 },
    ]);
  });

  test("leaves every mapping whose pages are not the file's bytes, or that holds nothing", () => {
    const smaps = [
      // Relocated, then made read-only (RELRO): dropping it would lose the relocations.
      mapping("0685f000-06867000", "r--p", EXE, { Rss: 32, Private_Dirty: 12, Anonymous: 12 }),
      // The same, its written pages swapped out and only pages never written resident: dropping it
      // would bring the swapped pages back as the file's bytes (in bun: WTF::Config, JSC's opcode table).
      mapping("0685f000-06867000", "r--p", EXE, { Rss: 20, Anonymous: 0, Swap: 12 }),
      // Written: .data, .bss.
      mapping("06867000-0823f000", "rw-p", EXE, { Rss: 2408 }),
      // A breakpoint (a debugger's, a uprobe's) is an anonymous copy of a code page.
      mapping("01a40000-0684a000", "r-xp", EXE, { Rss: 31208, Private_Dirty: 4, Anonymous: 4 }),
      // Shared with other processes through the file itself.
      mapping("7f0000000000-7f0000008000", "r--s", EXE, { Rss: 32 }),
      mapping("00100000-00200000", "r--p", EXE, { Rss: 0 }),
    ].join("\n");
    expect(cleanCodeMappings(smaps, EXE)).toEqual([]);
  });

  test("a binary just copied, its page cache not yet written back, is taken: its dirty pages are still the file's", () => {
    const smaps = mapping("01a40000-0684a000", "r-xp", EXE, { Rss: 31208, Private_Dirty: 31208 });
    expect(cleanCodeMappings(smaps, EXE)).toEqual([{ start: 0x1a40000n, end: 0x684a000n, rssKb: 31208 }]);
  });

  test("an executable replaced on disk is matched by the name /proc gives both: '(deleted)' appended", () => {
    const smaps = mapping("01a40000-0684a000", "r-xp", `${EXE} (deleted)`, { Rss: 100 });
    expect(cleanCodeMappings(smaps, EXE)).toEqual([]);
    expect(cleanCodeMappings(smaps, `${EXE} (deleted)`)).toEqual([{ start: 0x1a40000n, end: 0x684a000n, rssKb: 100 }]);
  });

  test("a mapping whose fields are missing (an unreadable smaps) is not taken", () => {
    expect(cleanCodeMappings(`01a40000-0684a000 r-xp 00000000 fd:01 1 ${EXE}\nRss: 100 kB`, EXE)).toEqual([]);
  });
});

describe("releaseCode", () => {
  test("drops the running executable's code from RSS, and the process runs on, native code and all", async () => {
    // A copy of bun written just now, as an operator's binary is when first started: its page
    // cache is dirty until written back, which must not keep its code from being released.
    const dir = makeTempDir("agentd-release-");
    const bun = join(dir, "bun");
    copyFileSync(realpathSync(BUN), bun);
    const script = join(dir, "probe.ts");
    writeFileSync(
      script,
      [
        importLine("src/core/process/codeRelease.ts", "{ releaseCode }"),
        'import { readFileSync, readlinkSync } from "node:fs";',
        "const exe = readlinkSync('/proc/self/exe');",
        // Resident kB of the executable's mappings.
        "const exeRss = () => { let kb = 0, mine = false; for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\\n')) {",
        "  if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) mine = line.endsWith(exe); else if (mine && line.startsWith('Rss:')) kb += Number(line.split(/\\s+/)[1]); } return kb; };",
        "const before = exeRss();",
        "const released = releaseCode();",
        "const after = exeRss();",
        // Code the process had not run yet, and code it had: a server, a client, hashing, JSON.
        "const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: async (r) => new Response(JSON.stringify({ got: await r.text() })) });",
        "const answer = await (await fetch('http://127.0.0.1:' + server.port + '/', { method: 'POST', body: 'still here' })).text();",
        "server.stop(true);",
        "const digest = new Bun.CryptoHasher('sha256').update('abc').digest('hex');",
        "console.log(JSON.stringify({ before, after, released: released.releasedKb, mappings: released.mappings, answer, digest }));",
      ].join("\n"),
    );
    const child = Bun.spawn([bun, script], { stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    const result = JSON.parse(out) as { before: number; after: number; released: number; mappings: number; answer: string; digest: string };
    expect(result.mappings).toBeGreaterThan(0);
    expect(result.released).toBeGreaterThan(0);
    // Almost all of it: the few pages the script ran between the release and the reading come back.
    expect(result.after).toBeLessThan(result.before / 2);
    expect(JSON.parse(result.answer)).toEqual({ got: "still here" });
    expect(result.digest).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });
});

describe("scheduleCodeRelease", () => {
  test("one release follows a burst of one-off work, timed from its last piece, naming every piece", async () => {
    const entries: Array<{ event: string } & LogFields> = [];
    const write = (event: string, fields?: LogFields) => void entries.push({ event, ...fields });
    const log: Logger = { debug: write, info: write, warn: write, error: write, child: () => log };
    const started = performance.now();
    scheduleCodeRelease(log, "start", 600);
    scheduleCodeRelease(log, "hop.connected", 50);
    await waitFor("the release", () => entries.length > 0);
    // Had the first not been replaced, it would come at 600 ms.
    await Bun.sleep(Math.max(0, 800 - (performance.now() - started)));
    expect(entries).toEqual([expect.objectContaining({ event: "memory.code_released", after: ["start", "hop.connected"] })]);
    expect(entries[0]!.released_kb as number).toBeGreaterThan(0);
  });
});
