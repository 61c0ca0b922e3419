import { afterEach, describe, expect, test } from "bun:test";
import { ModelSwitches } from "../../src/proxy/state/modelSwitches.ts";
import { createProxy, providerConfigSchema, proxyConfigSchema, type Proxy as ProxyApi } from "../../src/proxy/index.ts";
import { openStore } from "../../src/core/store/index.ts";
import { allMigrations } from "../../src/daemon/allMigrations.ts";

const route = (name: string) => ({ provider: { name }, upstreamModel: "m" });
const names = (routes: { provider: { name: string } }[]) => routes.map((r) => r.provider.name);

describe("switching a provider away for one model", () => {
  test("moves it last for that model only, while the switch lasts", () => {
    const switches = new ModelSwitches();
    const routes = [route("primary"), route("backup"), route("third")];
    expect(switches.order(routes, "qwen3", 0)).toBe(routes);
    expect(switches.switchAway("primary", "qwen3", 1000, 0)).toBe(1000);
    expect(names(switches.order(routes, "qwen3", 999))).toEqual(["backup", "third", "primary"]);
    expect(names(switches.order(routes, "glm", 999))).toEqual(["primary", "backup", "third"]);
    expect(names(switches.order(routes, "qwen3", 1000))).toEqual(["primary", "backup", "third"]);
  });

  test("never removes a route: the only provider of a model stays, and two switched ones keep their order", () => {
    const switches = new ModelSwitches();
    switches.switchAway("primary", "qwen3", 1000, 0);
    switches.switchAway("backup", "qwen3", 1000, 0);
    expect(names(switches.order([route("primary")], "qwen3", 1))).toEqual(["primary"]);
    expect(names(switches.order([route("primary"), route("backup"), route("third")], "qwen3", 1))).toEqual(["third", "primary", "backup"]);
  });
});

describe("the admin route", () => {
  let proxy: ProxyApi | undefined;
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });

  const post = (path: string, body: unknown) =>
    proxy!.adminRoutes.request(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

  test("switches one model of a provider; a bad body is a 400 and an unknown provider a 404, never a 500", async () => {
    const db = openStore({ path: ":memory:", migrations: allMigrations });
    proxy = createProxy({
      providers: [
        providerConfigSchema().parse({ name: "primary", base_url: "http://127.0.0.1:9/v1", priority: 1 }),
        providerConfigSchema().parse({ name: "backup", base_url: "http://127.0.0.1:9/v1" }),
      ],
      config: proxyConfigSchema().parse({}),
      db,
    });
    const ok = await post("/providers/primary/models/qwen3%2Fcoder/switch", { duration_ms: 60_000, reason: "test" });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ provider: "primary", model: "qwen3/coder" });
    expect((await post("/providers/primary/models/qwen3/switch", { duration_ms: -1 })).status).toBe(400);
    expect((await post("/providers/primary/models/qwen3/switch", { duration_ms: 1, extra: true })).status).toBe(400);
    expect((await post("/providers/nobody/models/qwen3/switch", { duration_ms: 1 })).status).toBe(404);
    expect(proxy.status().map((p) => [p.name, p.breaker.state])).toEqual([
      ["primary", "closed"],
      ["backup", "closed"],
    ]);
  });
});
