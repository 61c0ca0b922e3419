import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { userInfo } from "node:os";
import { allMigrations } from "../../src/daemon/allMigrations.ts";
import { openStore } from "../../src/core/store/index.ts";
import { ActionRequestStore, IncidentStore, type ActionRequest, type Incident, type IncidentEvent } from "../../src/watchdog/index.ts";
import { startDaemon, type DaemonProcess } from "../e2e/support/daemonProcess.ts";
import { ensureBinary, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

const T0 = Date.UTC(2030, 0, 15, 12, 0, 0);

interface Seeded {
  crash: Incident;
  check: Incident;
  old: Incident;
}

/** Three incidents in the store at `dataDir`: two unresolved (a crash with a decision, a failing check) and one resolved. */
function seed(dataDir: string): Seeded {
  const db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
  try {
    const store = new IncidentStore(db);
    const old = store.open({
      fingerprint: "provider:openai",
      pattern: "upstream.server_error",
      title: "Upstream 5xx storm — provider:openai",
      category: "upstream",
      severity: "error",
      now: T0 - 3_600_000,
    });
    store.setState(old.id, "resolved", "watchdog");
    const crash = store.open({
      fingerprint: "worker",
      pattern: "worker.crashed",
      title: "Worker killed by SIGKILL",
      category: "daemon",
      severity: "critical",
      now: T0,
    });
    store.addEvent(crash.id, "signal", "Worker killed by SIGKILL", {}, T0);
    store.recordDecision(crash.id, { tier: 1, action: "restart_worker", reason: "rule restart-crashed-worker: Worker killed by SIGKILL" });
    store.touch(crash.id, { now: T0 + 5000, severity: "critical", pattern: "worker.crashed", title: "Worker killed by SIGKILL" });
    const check = store.open({
      fingerprint: "check:db",
      pattern: "check.tcp",
      title: "Check db failing — check:db",
      category: "daemon",
      severity: "error",
      now: T0 + 1000,
    });
    return { crash: store.get(crash.id), check: store.get(check.id), old: store.get(old.id) };
  } finally {
    db.close();
  }
}

/** An open incident whose `run_command restart-db` waits for a decision (expiring in an hour). */
function seedRequest(dataDir: string, title: string): Incident {
  const db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
  try {
    const store = new IncidentStore(db);
    const incident = store.open({
      fingerprint: `check:${title}`,
      pattern: "check.tcp",
      title,
      category: "daemon",
      severity: "error",
      now: Date.now(),
    });
    new ActionRequestStore(db, store).create({
      incidentId: incident.id,
      command: "restart-db",
      tier: 1,
      reason: "rule restart-db",
      now: Date.now(),
      expiresAt: Date.now() + 3_600_000,
    });
    return store.get(incident.id);
  } finally {
    db.close();
  }
}

function readIncident(dataDir: string, id: number): { incident: Incident; timeline: IncidentEvent[] } {
  const db = openStore({ path: join(dataDir, "agentd.db"), migrations: allMigrations });
  try {
    const store = new IncidentStore(db);
    return { incident: store.get(id), timeline: store.timeline(id) };
  } finally {
    db.close();
  }
}

/** `agentd incidents …` with the home and working directory in `home`, so no developer config is read. */
const incidents = (home: string, ...args: string[]) => runAgentd(["incidents", ...args], { cwd: home, env: { HOME: home } });

beforeAll(() => ensureBinary(), 300_000);
afterAll(removeTempDirs);

describe("agentd incidents against the daemon found through --data-dir (its ready.json)", () => {
  let home: string;
  let dataDir: string;
  let seeded: Seeded;
  let daemon: DaemonProcess;

  beforeAll(async () => {
    home = makeTempDir("agentd-incidents-");
    dataDir = join(home, "data");
    seeded = seed(dataDir);
    daemon = await startDaemon({ dataDir, config: {} });
  }, 120_000);

  afterAll(async () => {
    await daemon?.stop();
  }, 60_000);

  test("list shows the unresolved incidents, most recent first, as a table", async () => {
    const result = await incidents(home, "--data-dir", dataDir);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ID +STATE +SEVERITY +LAST SEEN +COUNT +ACTION +TITLE$/);
    expect(lines[1]).toMatch(
      new RegExp(`^${seeded.crash.id} +open +critical +2030-01-15 12:00:05 +2 +restart_worker/pending +Worker killed by SIGKILL$`),
    );
    expect(lines[2]).toMatch(new RegExp(`^${seeded.check.id} +open +error +2030-01-15 12:00:01 +1 +- +Check db failing — check:db$`));
  }, 60_000);

  test("--state and --json select and print the incidents as JSON", async () => {
    const resolved = await incidents(home, "--data-dir", dataDir, "--state", "resolved", "--json");
    expect(resolved.stderr).toBe("");
    expect(resolved.code).toBe(0);
    const rows = JSON.parse(resolved.stdout) as Incident[];
    expect(rows.map((r) => [r.id, r.state, r.title])).toEqual([[seeded.old.id, "resolved", "Upstream 5xx storm — provider:openai"]]);

    const all = await incidents(home, "--data-dir", dataDir, "--state", "all", "--json", "--limit", "2");
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as Incident[]).map((r) => r.id)).toEqual([seeded.crash.id, seeded.check.id]);
  }, 60_000);

  test("show prints the incident with its decision and timeline", async () => {
    const result = await incidents(home, "--data-dir", dataDir, "show", String(seeded.crash.id));
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        `#${seeded.crash.id} Worker killed by SIGKILL`,
        "  state open, severity critical, category daemon",
        "  first seen 2030-01-15 12:00:00, last seen 2030-01-15 12:00:05, 2 signal(s)",
        "  tier 1, action restart_worker, verdict pending",
        "  reason: rule restart-crashed-worker: Worker killed by SIGKILL",
        "  timeline:",
        "    2030-01-15 12:00:00  signal        Worker killed by SIGKILL",
        "",
      ].join("\n"),
    );
    const json = await incidents(home, "--data-dir", dataDir, "show", String(seeded.check.id), "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      incident: { id: seeded.check.id, title: "Check db failing — check:db", state: "open" },
      timeline: [],
    });
  }, 60_000);

  test("ack then resolve move the incident forward and record the person behind the CLI (sudo's user, else the OS user)", async () => {
    const id = seeded.check.id;
    const acked = await runAgentd(["incidents", "--data-dir", dataDir, "ack", String(id)], {
      cwd: home,
      env: { HOME: home, SUDO_USER: "alice" },
    });
    expect(acked.stderr).toBe("");
    expect(acked.code).toBe(0);
    expect(acked.stdout).toBe(`#${id} acknowledged: Check db failing — check:db\n`);
    expect(readIncident(dataDir, id).incident).toMatchObject({ state: "acknowledged", details: { acknowledged_by: "cli:alice" } });

    const listed = await incidents(home, "--data-dir", dataDir, "--state", "acknowledged", "--json");
    expect((JSON.parse(listed.stdout) as Incident[]).map((r) => r.id)).toEqual([id]);

    const resolved = await runAgentd(["incidents", "--data-dir", dataDir, "resolve", String(id), "--json"], {
      cwd: home,
      env: { HOME: home, SUDO_USER: undefined },
    });
    expect(resolved.stderr).toBe("");
    expect(resolved.code).toBe(0);
    const me = `cli:${userInfo().username}`;
    expect(JSON.parse(resolved.stdout)).toMatchObject({ id, state: "resolved", details: { resolved_by: me } });
    expect(readIncident(dataDir, id).timeline.map((e) => e.message)).toEqual(["acknowledged by cli:alice", `resolved by ${me}`]);
  }, 60_000);

  test("approve allows the waiting command once, recorded as the CLI; show tells it; a second decision is refused", async () => {
    const incident = seedRequest(dataDir, "approve me");
    const shown = await incidents(home, "--data-dir", dataDir, "show", String(incident.id));
    expect(shown.stdout).toContain(`  command restart-db (pending): waiting for a decision until `);
    expect(shown.stdout).toContain(`agentd incidents approve ${incident.id} | deny ${incident.id}\n`);

    const approved = await incidents(home, "--data-dir", dataDir, "approve", String(incident.id));
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    expect(approved.stdout).toStartWith(`#${incident.id} run_command restart-db: allowed by cli at `);
    expect(readIncident(dataDir, incident.id).incident.action_request).toMatchObject({ status: "allowed", decided_by: "cli" });
    expect(readIncident(dataDir, incident.id).timeline.map((e) => e.message)).toEqual(["run_command restart-db allowed by cli"]);

    const again = await incidents(home, "--data-dir", dataDir, "deny", String(incident.id));
    expect(again.code).toBe(1);
    expect(again.stdout).toBe("");
    expect(again.stderr).toStartWith(
      `agentd incidents: The request to run restart-db on incident ${incident.id} is no longer pending: allowed by cli at `,
    );
  }, 60_000);

  test("deny --json prints the denied request; an incident without one says so", async () => {
    const incident = seedRequest(dataDir, "deny me");
    const denied = await incidents(home, "--data-dir", dataDir, "deny", String(incident.id), "--json");
    expect(denied.stderr).toBe("");
    expect(denied.code).toBe(0);
    expect(JSON.parse(denied.stdout) as ActionRequest).toMatchObject({
      incident_id: incident.id,
      command: "restart-db",
      status: "denied",
      decided_by: "cli",
    });

    const none = await incidents(home, "--data-dir", dataDir, "approve", String(seeded.old.id));
    expect(none.code).toBe(1);
    expect(none.stderr).toBe(`agentd incidents: Incident ${seeded.old.id} has no action waiting for a decision\n`);
  }, 60_000);

  test("an unknown incident id: exit 1 and one clear line", async () => {
    const result = await incidents(home, "--data-dir", dataDir, "show", "999");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("agentd incidents: No incident with id 999\n");
  }, 60_000);

  test("a daemon without incidents says so", async () => {
    const emptyDir = join(makeTempDir("agentd-incidents-empty-"), "data");
    mkdirSync(emptyDir);
    const empty = await startDaemon({ dataDir: emptyDir, config: {} });
    try {
      const result = await incidents(home, "--data-dir", emptyDir);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toBe("No incidents.\n");
      const json = await incidents(home, "--data-dir", emptyDir, "--json");
      expect(JSON.parse(json.stdout)).toEqual([]);
    } finally {
      await empty.stop();
    }
  }, 120_000);

  test("no daemon for a data dir: exit 5, a clear line, and no store is created anywhere", async () => {
    const cwd = makeTempDir("agentd-incidents-nodaemon-");
    const noDaemon = join(cwd, "data");
    const result = await runAgentd(["incidents", "--data-dir", noDaemon], { cwd, env: { HOME: cwd } });
    expect(result.code).toBe(5);
    expect(result.stdout).toBe("");
    expect(result.stderr).toStartWith("Cannot reach agentd at http://127.0.0.1:");
    expect(result.stderr).toContain("Is it running?");
    expect(existsSync(noDaemon)).toBe(false);
    expect(existsSync(join(cwd, ".agentd"))).toBe(false);
  }, 60_000);

  test("wrong usage exits 2 with a message and a hint", async () => {
    const cases: Array<[string[], string]> = [
      [["frobnicate"], 'unknown subcommand "frobnicate": expected one of list, show, ack, resolve, approve, deny'],
      [["approve"], "approve needs an incident id (a positive integer)"],
      [["show"], "show needs an incident id (a positive integer)"],
      [["ack", "abc"], "ack needs an incident id (a positive integer)"],
      [["resolve", "1", "2"], 'unexpected argument "2"'],
      [["--state", "sleeping"], 'Cannot use "sleeping" as --state: expected one of open, acknowledged, resolved, unresolved, all'],
      [["--limit", "0"], 'Cannot use "0" as --limit: expected an integer from 1 to 1000'],
    ];
    for (const [args, message] of cases) {
      const result = await incidents(home, "--data-dir", dataDir, ...args);
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(result.stderr).toBe(`agentd incidents: ${message}\nRun 'agentd incidents --help' for usage.\n`);
    }
  }, 120_000);
});

describe("agentd incidents against a running daemon (--url)", () => {
  let daemon: DaemonProcess;
  let home: string;
  let seeded: Seeded;

  beforeAll(async () => {
    home = makeTempDir("agentd-incidents-url-");
    const dataDir = join(home, "data");
    mkdirSync(dataDir);
    daemon = await startDaemon({ dataDir, config: {} });
    seeded = seed(daemon.dataDir);
  }, 120_000);

  afterAll(async () => {
    await daemon?.stop();
  }, 60_000);

  test("list, show, ack and resolve through the API", async () => {
    const url = daemon.url;
    const listed = await incidents(home, "--url", url, "--json");
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as Incident[]).map((r) => r.id)).toEqual([seeded.crash.id, seeded.check.id]);

    const table = await incidents(home, "--url", url, "--state", "resolved");
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`\\n${seeded.old.id} +resolved +error .*Upstream 5xx storm — provider:openai\\n$`));

    const shown = await incidents(home, "--url", url, "show", String(seeded.crash.id));
    expect(shown.stderr).toBe("");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toStartWith(`#${seeded.crash.id} Worker killed by SIGKILL\n  state open, severity critical, category daemon\n`);
    expect(shown.stdout).toContain("    2030-01-15 12:00:00  signal        Worker killed by SIGKILL\n");

    const acked = await incidents(home, "--url", url, "ack", String(seeded.crash.id));
    expect(acked.stderr).toBe("");
    expect(acked.code).toBe(0);
    expect(acked.stdout).toBe(`#${seeded.crash.id} acknowledged: Worker killed by SIGKILL\n`);

    const resolved = await incidents(home, "--url", url, "resolve", String(seeded.crash.id), "--json");
    expect(resolved.code).toBe(0);
    // The person behind the CLI: sudo's user when the test runs under sudo, else the OS user.
    const cliPerson = `cli:${process.env.SUDO_USER || userInfo().username}`;
    expect(JSON.parse(resolved.stdout)).toMatchObject({
      id: seeded.crash.id,
      state: "resolved",
      details: { acknowledged_by: cliPerson, resolved_by: cliPerson },
    });

    const remaining = await incidents(home, "--url", url, "--json");
    expect((JSON.parse(remaining.stdout) as Incident[]).map((r) => r.id)).toEqual([seeded.check.id]);
  }, 120_000);

  test("approve through the API records the CLI as the decider; a second approve is the daemon's 409 message", async () => {
    const incident = seedRequest(daemon.dataDir, "approve over http");
    const approved = await incidents(home, "--url", daemon.url, "approve", String(incident.id), "--json");
    expect(approved.stderr).toBe("");
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout) as ActionRequest).toMatchObject({ incident_id: incident.id, status: "allowed", decided_by: "cli" });

    const again = await incidents(home, "--url", daemon.url, "approve", String(incident.id));
    expect(again.code).toBe(1);
    expect(again.stderr).toStartWith(
      `agentd incidents: The request to run restart-db on incident ${incident.id} is no longer pending: allowed by cli at `,
    );
  }, 60_000);

  test("an unknown id through the API: exit 1 and the daemon's message", async () => {
    const result = await incidents(home, "--url", daemon.url, "ack", "999");
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe("agentd incidents: No incident with id 999\n");
  }, 60_000);

  test("nothing listening at --url: exit 5 and a clear line, no stack", async () => {
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
    const port = server.port!;
    server.stop(true);
    const result = await incidents(home, "--url", `http://127.0.0.1:${port}`);
    expect(result.code).toBe(5);
    expect(result.stdout).toBe("");
    expect(result.stderr).toStartWith(`Cannot reach agentd at http://127.0.0.1:${port}: `);
    expect(result.stderr.trimEnd().split("\n")).toHaveLength(1);
  }, 60_000);
});
