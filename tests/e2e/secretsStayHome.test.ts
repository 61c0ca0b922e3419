import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { chmodSync, chownSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseLogLine, readLines, type LogRecord } from "../../src/core/log/index.ts";
import { binaryForAnyUser, cleanEnv, stopChild } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";
import { isProcessAlive, waitFor } from "../support/waitFor.ts";
import { addUser, deleteUser } from "../support/systemUsers.ts";

/**
 * agentd run as an ordinary (non-root) user, with secrets in its environment: a command the agent
 * runs sees none of them, neither in its own environment nor through /proc of either agentd process.
 * Everything agentd leaves in its data dir is its user's alone, and a command quoting a credential
 * is shown redacted in logs and on /status.
 */

const USER = `agentdsec${process.pid % 100_000}`;
const BEARER = "sk-live-Qm7Zt2Lx9Vb4Nc8Rw1Ky5";
const SECRETS: Record<string, string> = {
  LLM_PROVIDER_CRED: "sekrit-provider-Aq1",
  // Not secret-looking by name: withheld because the config reads it with {env:…}.
  LLM_UPSTREAM: "http://127.0.0.1:9/v1-sekrit-Bq2",
  PGPASSWORD: "sekrit-pg-Cq3",
  MYSQL_PWD: "sekrit-mysql-Dq4",
  DATABASE_URL: "postgres://u:sekrit-db-Eq5@db/x",
  GITHUB_PAT: "sekrit-pat-Fq6",
  SLACK_WEBHOOK_URL: "https://hooks.example/sekrit-slack-Gq7",
  SENTRY_DSN: "https://sekrit-sentry-Hq8@sentry.example/1",
  AWS_SECRET_ACCESS_KEY: "sekrit-aws-Iq9",
  NPM_TOKEN: "sekrit-npm-Jr1",
  STRIPE_API_KEY: "sekrit-stripe-Kr2",
  REDIS_PASS: "sekrit-redis-Lr3",
  DOCKER_AUTH_CONFIG: "sekrit-docker-Mr4",
  SESSION_SECRET: "sekrit-session-Nr5",
  AZURE_CLIENT_CREDENTIAL: "sekrit-azure-Or6",
  HTTP_COOKIE_JAR: "sekrit-cookie-Pr7",
};
const PASSED = { DEPLOY_KEY_ID: "passed-on-purpose-Qr8" };

let proc: Subprocess<"ignore", "pipe", "pipe"> | undefined;
const lines: LogRecord[] = [];
let dataDir: string;
let url = "";
let token = "";
let uid = 0;

async function api(path: string, init: { method?: string; body?: unknown } = {}): Promise<any> {
  const response = await fetch(url + path, {
    method: init.method ?? (init.body === undefined ? "GET" : "POST"),
    headers: { authorization: `Bearer ${token}`, ...(init.body === undefined ? {} : { "content-type": "application/json" }) },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${text}`);
  return response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).map((entry) => join(dir, entry));
}

beforeAll(async () => {
  const binary = await binaryForAnyUser();
  if (!addUser(["--system", "--no-create-home", "--shell", "/bin/bash"], USER)) throw new Error(`${USER} exists already`);
  uid = Number(Bun.spawnSync(["id", "-u", USER]).stdout.toString().trim());
  dataDir = makeTempDir("agentd-secrets-");
  chownSync(dataDir, uid, uid);
  const configDir = makeTempDir("agentd-secrets-config-");
  chmodSync(configDir, 0o755);
  const configPath = join(configDir, "agentd.jsonc");
  const config = {
    providers: [{ name: "upstream", base_url: "{env:LLM_UPSTREAM}", api_key: "{env:LLM_PROVIDER_CRED}", models: ["*"] }],
    pty: { pass_env: Object.keys(PASSED) },
  };
  writeFileSync(configPath, JSON.stringify(config), { mode: 0o644 });
  proc = Bun.spawn(
    [
      "setpriv",
      "--reuid",
      USER,
      "--regid",
      USER,
      "--init-groups",
      "--",
      binary,
      "serve",
      "--port",
      "0",
      "--require-token",
      "--data-dir",
      dataDir,
      "--config",
      configPath,
    ],
    { env: cleanEnv({ ...SECRETS, ...PASSED, HOME: dataDir }), stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  void readLines(proc.stdout, (line) => {
    const record = parseLogLine(line);
    if (record) lines.push(record);
  });
  const listening = await waitFor("the worker to listen", () => lines.find((r) => r.event === "http.listening"), { timeoutMs: 60_000 });
  url = String(listening.url);
  token = readFileSync(join(dataDir, "token"), "utf8").trim();
}, 90_000);

afterAll(async () => {
  if (proc) {
    const workers = lines.filter((r) => r.event === "worker.spawned").map((r) => Number(r.pid));
    await stopChild(proc, 20_000);
    for (const pid of workers) if (isProcessAlive(pid)) process.kill(pid, "SIGKILL");
  }
  await deleteUser(USER);
  removeTempDirs();
});

describe("secrets stay with agentd", () => {
  test("a command sees no secret in env, nor in /proc of the worker or the supervisor", async () => {
    const workerPid = Number(lines.findLast((r) => r.event === "worker.spawned")?.pid);
    const supervisorPid = Number(lines.find((r) => r.event === "supervisor.start")?.pid);
    const cmd = [
      "id -u",
      'echo "ppid=$PPID"',
      "env",
      "echo ---own-parent",
      "tr '\\0' '\\n' < /proc/$PPID/environ",
      `echo ---worker; tr '\\0' '\\n' < /proc/${workerPid}/environ`,
      `echo ---supervisor; tr '\\0' '\\n' < /proc/${supervisorPid}/environ`,
      `echo ---mem; head -c 64 /proc/${workerPid}/mem | od | head -2`,
      "echo ---end",
    ].join("; ");
    const result = await api("/api/pty", { body: { cmd, yield_time_ms: 10_000, max_output_tokens: 100_000 } });
    const output = String(result.output);
    expect(output).toContain("---end");
    expect(output).toContain(`${uid}\r\n`);
    // Started as a user, the command runs in a PID namespace of its own: agentd is not even there to ask.
    expect(output).toContain("ppid=0");
    // The command ran, its environment is there, and the one variable named in pass_env passed.
    expect(output).toMatch(/\bPATH=/);
    expect(output).toContain(PASSED.DEPLOY_KEY_ID);
    for (const [name, value] of Object.entries(SECRETS)) expect({ name, leaked: output.includes(value) }).toEqual({ name, leaked: false });
    // Every /proc read of agentd's processes fails: they are out of the command's PID namespace.
    expect(output.match(/No such file or directory/g)?.length ?? 0).toBeGreaterThanOrEqual(4);
  }, 30_000);
});

describe("files agentd makes", () => {
  test("after a session every file in the data dir is 0600 and every directory 0700, all owned by agentd's user", async () => {
    // A truncated output is kept under tool-output/.
    const long = await api("/api/pty", { body: { cmd: "seq 1 20000", yield_time_ms: 5000, max_output_tokens: 50 } });
    expect(long.output_file).toBeString();
    const entries = filesUnder(dataDir).map((path) => {
      const info = statSync(path);
      return { path: path.slice(dataDir.length), dir: info.isDirectory(), mode: (info.mode & 0o7777).toString(8), uid: info.uid };
    });
    expect(entries.map((e) => e.path)).toEqual(expect.arrayContaining(["/agentd.db", "/token", "/ready.json", "/logs/agentd.log"]));
    for (const entry of entries) expect(entry).toEqual({ ...entry, mode: entry.dir ? "700" : "600", uid });
  }, 30_000);
});

describe("commands are redacted where they are shown", () => {
  test("a bearer token in a command is absent from the logs and from /status", async () => {
    const cmd = `curl -s -H "Authorization: Bearer ${BEARER}" http://127.0.0.1:9/ ; sleep 30`;
    const opened = await api("/api/pty", { body: { cmd, yield_time_ms: 300 } });
    expect(opened.running).toBe(true);
    const open = await waitFor("the pty.open line", () => lines.find((r) => r.event === "pty.open" && String(r.cmd).includes("curl")));
    expect(String(open.cmd)).toContain("Bearer [redacted]");
    const text = await api("/status", { method: "GET" });
    const json = await (await fetch(`${url}/status?format=json`, { headers: { authorization: `Bearer ${token}` } })).text();
    const html = await (await fetch(`${url}/status`, { headers: { authorization: `Bearer ${token}`, accept: "text/html" } })).text();
    for (const view of [text, json, html, JSON.stringify(lines), readFileSync(join(dataDir, "logs", "agentd.log"), "utf8")]) {
      expect(view).not.toContain(BEARER);
    }
    expect(String(text)).toContain("Bearer [redacted]");
    await api(`/api/pty/${opened.session_id}`, { method: "DELETE" });
  }, 30_000);
});
