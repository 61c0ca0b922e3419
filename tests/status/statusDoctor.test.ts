import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  configNamesHops,
  formatDoctorReport,
  providerChecks,
  runDoctorChecks,
  sshCheck,
  type DoctorResult,
} from "../../src/cli/commands/doctor.ts";
import { hopsConfigSchema } from "../../src/core/config/sections/hopConfig.ts";
import { providerConfigSchema } from "../../src/core/config/sections/providerConfig.ts";
import { judgeRequestOrigin } from "../../src/http/csrfGuard.ts";
import { startScriptedUpstream } from "../support/scriptedUpstream.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

// `agentd doctor`'s checks and report, and the page's CSRF rule (both small pure-ish pieces of issue 8).

const servers: Array<{ stop(force?: boolean): unknown }> = [];
afterAll(async () => {
  for (const server of servers.splice(0)) await server.stop(true);
  removeTempDirs();
});

const provider = (name: string, base_url: string, api_key?: string) =>
  providerConfigSchema().parse({ name, base_url, ...(api_key ? { api_key } : {}) });

describe("doctor: providers", () => {
  test("each provider is asked GET <base_url>/models with its key; 2xx passes, 401 fails with a hint about the key", async () => {
    const upstream = startScriptedUpstream();
    servers.push({ stop: () => upstream.close() });
    const refusing = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => Response.json({ error: { message: "bad key" } }, { status: 401 }),
    });
    servers.push(refusing);
    const check = providerChecks(
      [provider("good", `${upstream.url}/`, "sk-good"), provider("bad", `http://127.0.0.1:${refusing.port}/v1/chat/completions`, "sk-bad")],
      10_000,
    );
    const results = (await check.run()) as DoctorResult[];
    expect(results.map((r) => [r.name, r.status])).toEqual([
      ["provider good", "pass"],
      ["provider bad", "fail"],
    ]);
    expect(upstream.requests.at(-1)).toMatchObject({ method: "GET", path: "/v1/models" });
    expect(upstream.requests.at(-1)!.headers.authorization).toBe("Bearer sk-good");
    expect(results[1]!.detail).toBe(`GET http://127.0.0.1:${refusing.port}/v1/models answered 401`);
    expect(results[1]!.hint).toContain("api_key");
  });

  test("a provider that does not answer fails after the timeout; an unreachable one fails at once", async () => {
    const stalled: Array<() => void> = [];
    const silent = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      idleTimeout: 0,
      fetch: () => new Promise<Response>((resolve) => stalled.push(() => resolve(new Response("late")))),
    });
    servers.push({
      stop: (force) => {
        for (const release of stalled) release();
        return silent.stop(force as boolean);
      },
    });
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const closedPort = closed.port;
    await closed.stop(true);
    const results = (await providerChecks(
      [provider("slow", `http://127.0.0.1:${silent.port}/v1`), provider("gone", `http://127.0.0.1:${closedPort}/v1`)],
      300,
    ).run()) as DoctorResult[];
    expect(results[0]).toMatchObject({
      status: "fail",
      detail: `GET http://127.0.0.1:${silent.port}/v1/models did not answer within 300 ms`,
    });
    expect(results[1]!.status).toBe("fail");
    expect(results[1]!.detail).toStartWith(`GET http://127.0.0.1:${closedPort}/v1/models failed:`);
  });

  test("no provider is a skip, not a failure", async () => {
    expect(await providerChecks([], 1000).run()).toMatchObject({ status: "skip" });
  });
});

describe("doctor: ssh keys for hops", () => {
  test("a readable identity file passes; none and no agent fails with a hint", async () => {
    const home = makeTempDir("agentd-doctor-home-");
    const hops = hopsConfigSchema().parse({ use_agent: false });
    const missing = (await sshCheck(hops, {}, home).run()) as DoctorResult;
    expect(missing.status).toBe("fail");
    expect(missing.hint).toContain("ssh-keygen");
    mkdirSync(join(home, ".ssh"));
    writeFileSync(join(home, ".ssh", "id_rsa"), "key\n");
    chmodSync(join(home, ".ssh", "id_rsa"), 0o600);
    const found = (await sshCheck(hops, {}, home).run()) as DoctorResult;
    expect(found).toMatchObject({ status: "pass", detail: `${join(home, ".ssh", "id_rsa")} is readable` });
  });

  test("the check runs only when the config file has a hops section", () => {
    expect(configNamesHops('{\n  // jump through the bastion\n  "hops": { "use_agent": false },\n}')).toBe(true);
    expect(configNamesHops('{ "providers": [] /* no hops */ }')).toBe(false);
    expect(configNamesHops("")).toBe(false);
  });

  test("SSH_AUTH_SOCK pointing at nothing does not count as an agent", async () => {
    const home = makeTempDir("agentd-doctor-home-");
    const result = (await sshCheck(
      hopsConfigSchema().parse({}),
      { SSH_AUTH_SOCK: join(home, "no-agent.sock") },
      home,
    ).run()) as DoctorResult;
    expect(result.status).toBe("fail");
    expect(result.detail).toContain("no-agent.sock");
  });
});

describe("doctor: report", () => {
  test("one line per check with the hint on failures, a summary, and a throwing check becomes a failure", async () => {
    const results = await runDoctorChecks([
      { name: "a", run: async () => ({ name: "a", status: "pass", detail: "fine" }) },
      {
        name: "boom",
        run: async () => {
          throw new Error("kaput");
        },
      },
      {
        name: "c",
        run: async () => [
          { name: "c1", status: "fail", detail: "broken", hint: "fix it" },
          { name: "c2", status: "skip", detail: "n/a" },
        ],
      },
    ]);
    expect(formatDoctorReport(results)).toBe(
      [
        "pass  a         fine",
        "fail  boom      the check itself failed: kaput",
        "fail  c1        broken (hint: fix it)",
        "skip  c2        n/a",
        "agentd doctor: 1 passed, 2 failed, 1 skipped",
        "",
      ].join("\n"),
    );
  });
});

describe("CSRF rule for state-changing requests", () => {
  test("same-origin browsers and programs without browser headers pass; other sites do not", () => {
    expect(judgeRequestOrigin({ secFetchSite: "same-origin", origin: "http://a:1", host: "a:1" }).allowed).toBe(true);
    expect(judgeRequestOrigin({ origin: "http://127.0.0.1:7070", host: "127.0.0.1:7070" }).allowed).toBe(true);
    expect(judgeRequestOrigin({ host: "127.0.0.1:7070" }).allowed).toBe(true);
    expect(judgeRequestOrigin({ secFetchSite: "same-site", host: "a" })).toEqual({ allowed: false, reason: "Sec-Fetch-Site is same-site" });
    expect(judgeRequestOrigin({ origin: "http://127.0.0.1:9999", host: "127.0.0.1:7070" }).allowed).toBe(false);
    expect(judgeRequestOrigin({ origin: "not a url", host: "a" }).allowed).toBe(false);
  });
});
