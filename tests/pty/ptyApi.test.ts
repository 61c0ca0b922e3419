import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { Hono } from "hono";
import { ToolError } from "../../src/core/tools/toolDefinition.ts";
import { setLogSink } from "../../src/core/log/index.ts";
import { createPtyRoutes, createPtyTools, ptyConfigSchema, PtyManager } from "../../src/pty/index.ts";
import { expectNoLeaks, openFdCount } from "./processAudit.ts";

setLogSink(() => {});

const dataDir = makeTempDir("agentd-pty-api-");
let manager: PtyManager;
let baselineFds: number;

const toolContext = { signal: new AbortController().signal, progress: () => {} };

beforeAll(async () => {
  const warm = new PtyManager({ dataDir, config: ptyConfigSchema().parse({}) });
  await warm.exec({ cmd: "true" });
  await warm.close();
});

beforeEach(() => {
  baselineFds = openFdCount();
  manager = new PtyManager({ dataDir, config: ptyConfigSchema().parse({ close_grace_ms: 200 }) });
});

afterEach(async () => {
  await manager.close();
  await expectNoLeaks(baselineFds);
});

describe("agent tools", () => {
  test("are the four PTY tools, in the exec scope", () => {
    const tools = createPtyTools(manager);
    expect(tools.map((tool) => tool.name)).toEqual(["exec_command", "write_stdin", "list_sessions", "close_session"]);
    expect(new Set(tools.map((tool) => tool.scope))).toEqual(new Set(["exec"]));
  });

  test("schemas reject what the model gets wrong", () => {
    const [exec, write, list, close] = createPtyTools(manager);
    expect(exec!.parameters.safeParse({ cmd: "ls" }).success).toBe(true);
    expect(exec!.parameters.safeParse({}).success).toBe(false);
    expect(exec!.parameters.safeParse({ cmd: "ls", command: "ls" }).success).toBe(false);
    expect(exec!.parameters.safeParse({ cmd: "ls", cols: 5 }).success).toBe(false);
    expect(write!.parameters.safeParse({ session_id: "a" }).success).toBe(true);
    expect(write!.parameters.safeParse({ chars: "x" }).success).toBe(false);
    expect(list!.parameters.safeParse({}).success).toBe(true);
    expect(close!.parameters.safeParse({ session_id: "a", force: "yes" }).success).toBe(false);
  });

  test("run a session from start to close", async () => {
    const [exec, write, list, close] = createPtyTools(manager);
    const started = (await exec!.execute(exec!.parameters.parse({ cmd: "cat", yield_time_ms: 250 }), toolContext)) as {
      session_id: string;
      running: boolean;
    };
    expect(started.running).toBe(true);
    const echoed = (await write!.execute(
      write!.parameters.parse({ session_id: started.session_id, chars: "hi\n", yield_time_ms: 300 }),
      toolContext,
    )) as { output: string };
    expect(echoed.output).toContain("hi\r\n");
    const listed = (await list!.execute({}, toolContext)) as { sessions: { id: string }[] };
    expect(listed.sessions.map((session) => session.id)).toEqual([started.session_id]);
    const closed = (await close!.execute({ session_id: started.session_id }, toolContext)) as { exit_code: number; signal: string };
    expect(closed).toMatchObject({ exit_code: 129, signal: "SIGHUP" });
  });

  test("an unknown session is a tool error the model can read", async () => {
    const [, write] = createPtyTools(manager);
    const failure = write!.execute(write!.parameters.parse({ session_id: "missing" }), toolContext);
    await expect(failure).rejects.toBeInstanceOf(ToolError);
    await expect(failure).rejects.toMatchObject({ code: "pty_session_not_found" });
  });
});

describe("/api/pty", () => {
  const app = () => new Hono().route("/api/pty", createPtyRoutes(manager));
  const post = (path: string, body: unknown) =>
    app().request(path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  test("POST / runs a command", async () => {
    const response = await post("/api/pty", { cmd: "echo over-http; exit 2" });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ session_id: null, output: "over-http\r\n", running: false, exit_code: 2 });
  });

  test("stdin, list and delete drive a session", async () => {
    const { session_id: id } = (await (await post("/api/pty", { cmd: "cat", yield_time_ms: 250 })).json()) as { session_id: string };
    const echoed = (await (await post(`/api/pty/${id}/stdin`, { chars: "ping\n", yield_time_ms: 300 })).json()) as { output: string };
    expect(echoed.output).toContain("ping\r\n");
    const listed = (await (await app().request("/api/pty")).json()) as { sessions: { id: string; cmd: string }[] };
    expect(listed.sessions).toMatchObject([{ id, cmd: "cat" }]);
    const deleted = await app().request(`/api/pty/${id}?force=true`, { method: "DELETE" });
    expect(deleted.status).toBe(200);
    expect(await deleted.json()).toMatchObject({ session_id: id, exit_code: 137, signal: "SIGKILL" });
  });

  test("invalid bodies are 400 invalid_request naming the field; a body that is not JSON is invalid_json", async () => {
    const cases: [unknown, string, string | null][] = [
      [{}, "invalid_request", "cmd"],
      [{ cmd: "" }, "invalid_request", "cmd"],
      [{ cmd: "ls", bogus: 1 }, "invalid_request", "bogus"],
      ["{not json", "invalid_json", null],
    ];
    for (const [body, code, param] of cases) {
      const response = await post("/api/pty", body);
      expect(response.status).toBe(400);
      const json = (await response.json()) as { error: { code: string; type: string; param: string | null } };
      expect(json.error).toMatchObject({ code, type: "invalid_request_error", param });
    }
    const badForce = await app().request("/api/pty/x?force=maybe", { method: "DELETE" });
    expect(badForce.status).toBe(400);
    expect(((await badForce.json()) as { error: unknown }).error).toMatchObject({ code: "invalid_query", param: "force" });
  });

  test("an unknown id is 404 pty_session_not_found", async () => {
    for (const response of [
      await post("/api/pty/nope/stdin", { chars: "x" }),
      await app().request("/api/pty/nope", { method: "DELETE" }),
    ]) {
      expect(response.status).toBe(404);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("pty_session_not_found");
    }
  });
});

afterAll(() => removeTempDirs());
