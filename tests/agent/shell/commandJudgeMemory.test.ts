import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { agentMigrations } from "../../../src/agent/agentMigrations.ts";
import { CommandJudge } from "../../../src/agent/shell/commandJudge.ts";
import { WrittenFileStore } from "../../../src/agent/writtenFileStore.ts";
import { SessionStore } from "../../../src/agent/sessionStore.ts";
import { baseMigrations, openStore } from "../../../src/core/store/index.ts";
import type { ToolDefinition } from "../../../src/core/tools/toolDefinition.ts";
import { makeTempDir, removeTempDirs } from "../../support/tempDir.ts";

afterAll(removeTempDirs);

const tool = (name: string) => ({ name }) as ToolDefinition;

test("a file the session wrote before a restart still asks when run after it", async () => {
  const path = join(makeTempDir("agentd-judge-"), "agentd.db");
  const db = openStore({ path, migrations: [...baseMigrations, ...agentMigrations] });
  const session = new SessionStore(db).create({ model: "m", target: "local", policy: {} });
  const before = new CommandJudge(new WrittenFileStore(db));
  expect(await before.judge(session.id, tool("write_file"), { path: "/tmp/x/run-me.sh", content: "id" })).toEqual([]);
  expect(await before.judge(session.id, tool("exec_command"), { cmd: "echo hi > helper.sh" })).toEqual([]);
  db.close();

  // The worker restarted: a new judge over the same store.
  const reopened = openStore({ path, migrations: [...baseMigrations, ...agentMigrations] });
  const after = new CommandJudge(new WrittenFileStore(reopened));
  expect((await after.judge(session.id, tool("exec_command"), { cmd: "bash /tmp/x/run-me.sh" })).length).toBeGreaterThan(0);
  expect((await after.judge(session.id, tool("exec_command"), { cmd: "./helper.sh" })).length).toBeGreaterThan(0);
  // Another session wrote nothing.
  const other = new SessionStore(reopened).create({ model: "m", target: "local", policy: {} });
  expect(await after.judge(other.id, tool("exec_command"), { cmd: "bash /tmp/x/run-me.sh" })).toEqual([]);
  reopened.close();
});

test("typing into a terminal agentd cannot look into (a hop's) asks; into a local shell it is judged line by line", async () => {
  const judge = new CommandJudge();
  const stdin = (reader: { comm: string; privileged: boolean } | undefined) =>
    ({ name: "write_stdin", inputReader: () => reader }) as unknown as ToolDefinition;
  expect((await judge.judge("s", stdin(undefined), { session_id: "hop1", chars: "ls\n" })).length).toBeGreaterThan(0);
  expect(await judge.judge("s", stdin({ comm: "bash", privileged: false }), { session_id: "t1", chars: "ls\n" })).toEqual([]);
  expect((await judge.judge("s", stdin({ comm: "bash", privileged: true }), { session_id: "t2", chars: "ls\n" })).length).toBeGreaterThan(
    0,
  );
});

test("forget lets an idle session go, but keeps a half-typed terminal line so a word split across turns is still read whole", async () => {
  const path = join(makeTempDir("agentd-judge-"), "agentd.db");
  const db = openStore({ path, migrations: [...baseMigrations, ...agentMigrations] });
  const sessions = new SessionStore(db);
  const judge = new CommandJudge(new WrittenFileStore(db));
  const shell = { name: "write_stdin", inputReader: () => ({ comm: "bash", privileged: false }) } as unknown as ToolDefinition;

  const wrote = sessions.create({ model: "m", target: "local", policy: {} }).id;
  expect(await judge.judge(wrote, tool("exec_command"), { cmd: "echo id > later.sh" })).toEqual([]);
  judge.forget(wrote);
  expect(judge.size).toBe(0);
  // Read back from the store on its next call.
  expect((await judge.judge(wrote, tool("exec_command"), { cmd: "./later.sh" })).length).toBeGreaterThan(0);

  const typing = sessions.create({ model: "m", target: "local", policy: {} }).id;
  expect(await judge.judge(typing, shell, { session_id: "t1", chars: "sud" })).toEqual([]);
  judge.forget(typing);
  expect((await judge.judge(typing, shell, { session_id: "t1", chars: "o id\n" })).length).toBeGreaterThan(0);
  // The line is complete now: nothing is left that only memory holds.
  judge.forget(wrote);
  judge.forget(typing);
  expect(judge.size).toBe(0);
  db.close();
});
