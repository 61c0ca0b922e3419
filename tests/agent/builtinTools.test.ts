import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, chmodSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { servicesConfigSchema } from "../../src/core/config/sections/servicesConfig.ts";
import type { ToolContext } from "../../src/agent/index.ts";
import { createReadFileTool, createWriteFileTool } from "../../src/files/fileTools.ts";
import { createLocalFiles } from "../../src/files/localFiles.ts";
import { createIncidentTools } from "../../src/watchdog/incidents/incidentTools.ts";
import { createServiceTools } from "../../src/agent/serviceTools.ts";
import { baseMigrations, openStore } from "../../src/core/store/index.ts";
import { IncidentStore } from "../../src/watchdog/index.ts";

const dir = mkdtempSync(join(tmpdir(), "agentd-tools-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const progress: string[] = [];
const ctx: ToolContext = { signal: new AbortController().signal, progress: (m) => void progress.push(m), sessionId: "ses_test" };

describe("read_file", () => {
  const read = createReadFileTool({ maxBytes: 4096, files: createLocalFiles([]) });
  const parse = (args: unknown) => read.parameters.parse(args);
  test("returns the requested lines with counts", async () => {
    const path = join(dir, "lines.txt");
    writeFileSync(path, `${Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n")}\n`);
    expect(await read.execute(parse({ path, offset: 3, limit: 2 }), ctx)).toEqual({
      path,
      total_lines: 10,
      offset: 3,
      lines_returned: 2,
      more: true,
      content: "line 3\nline 4",
    });
  });
  test("refuses binaries, huge files, directories and missing files with clear codes", async () => {
    const bin = join(dir, "bin");
    writeFileSync(bin, Buffer.from([1, 2, 0, 3]));
    const big = join(dir, "big.txt");
    writeFileSync(big, "x".repeat(5000));
    await expect(read.execute(parse({ path: bin }), ctx)).rejects.toMatchObject({ code: "binary_file" });
    await expect(read.execute(parse({ path: big }), ctx)).rejects.toMatchObject({ code: "file_too_large" });
    await expect(read.execute(parse({ path: dir }), ctx)).rejects.toMatchObject({ code: "file_is_directory" });
    await expect(read.execute(parse({ path: join(dir, "nope") }), ctx)).rejects.toMatchObject({ code: "file_not_found" });
  });
});

describe("write_file", () => {
  const write = createWriteFileTool(createLocalFiles([]));
  test("replaces a file atomically, keeps its mode and leaves no temp file", async () => {
    const path = join(dir, "conf", "app.conf");
    await expect(write.execute(write.parameters.parse({ path, content: "a" }), ctx)).rejects.toMatchObject({ code: "directory_not_found" });
    expect(await write.execute(write.parameters.parse({ path, content: "v1\n", create_dirs: true }), ctx)).toEqual({
      path,
      bytes: 3,
      created: true,
    });
    chmodSync(path, 0o600);
    expect(await write.execute(write.parameters.parse({ path, content: "v2\n" }), ctx)).toEqual({ path, bytes: 3, created: false });
    expect(readFileSync(path, "utf8")).toBe("v2\n");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(dir, "conf"))).toEqual(["app.conf"]);
  });
});

describe("services and incidents", () => {
  test("service_status and restart_service run the configured commands", async () => {
    const marker = join(dir, "restarted");
    const [status, restart] = createServiceTools(
      servicesConfigSchema().parse([{ name: "web", status: `test -f ${marker} && echo up`, restart: `touch ${marker}` }]),
    );
    expect(restart!.scope).toBe("service_control");
    expect(await status!.execute({ name: "web" }, ctx)).toMatchObject({ healthy: false, exit_code: 1 });
    expect(await restart!.execute({ name: "web" }, ctx)).toMatchObject({ restarted: true, healthy: true, status_output: "up" });
    await expect(status!.execute({ name: "db" }, ctx)).rejects.toMatchObject({ code: "unknown_service" });
  });
  test("a status command runs unasked, so confined like the agent's commands; an (asked) restart runs as configured; neither gets a secret", async () => {
    process.env.SERVICE_TEST_API_KEY = "sk-service-secret";
    const probe = "grep NoNewPrivs /proc/self/status; echo key=[$SERVICE_TEST_API_KEY]";
    const [status, restart] = createServiceTools(servicesConfigSchema().parse([{ name: "probe", status: probe, restart: probe }]));
    expect(((await status!.execute({ name: "probe" }, ctx)) as { output: string }).output).toMatch(/NoNewPrivs:\s+1/);
    const restarted = (await restart!.execute({ name: "probe" }, ctx)) as { restart_output: string; status_output: string };
    expect(restarted.restart_output).toMatch(/NoNewPrivs:\s+0/);
    expect(`${restarted.restart_output} ${restarted.status_output}`).not.toContain("sk-service-secret");
    expect(restarted.restart_output).toContain("key=[]");
    delete process.env.SERVICE_TEST_API_KEY;
  });
  test("list_incidents and get_incident read the incident store", async () => {
    const db = openStore({ path: ":memory:", migrations: baseMigrations });
    db.run(
      "INSERT INTO incidents (dedup_key, title, category, severity, first_seen, last_seen, details) VALUES ('k', 'upstream 429s', 'upstream', 'warn', 1, 2, '{\"n\":1}')",
    );
    const [list, get] = createIncidentTools(new IncidentStore(db));
    const listed = (await list!.execute(list!.parameters.parse({}), ctx)) as any;
    expect(listed.total).toBe(1);
    expect(listed.incidents[0]).toMatchObject({ title: "upstream 429s", state: "open" });
    expect(await get!.execute({ id: listed.incidents[0].id }, ctx)).toMatchObject({ details: { n: 1 } });
    await expect(get!.execute({ id: 99 }, ctx)).rejects.toMatchObject({ code: "incident_not_found" });
    db.close();
  });
});
