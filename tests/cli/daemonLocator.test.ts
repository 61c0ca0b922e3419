import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/core/config/index.ts";
import { UnreachableError } from "../../src/cli/daemonClient.ts";
import { locateDaemon, type LocatorIo } from "../../src/cli/daemonLocator.ts";
import type { ReadyInfo } from "../../src/daemon/readyFile.ts";

const ready = (url: string): ReadyInfo => ({
  pid: 1,
  supervisor_pid: 2,
  bind: "127.0.0.1",
  port: Number(new URL(url).port),
  url,
  version: "t",
  started_at: "",
});

/** A filesystem of ready files and tokens by data dir, and a config that parses or not. */
function io(files: {
  ready?: Record<string, string>;
  tokens?: Record<string, string>;
  config?: { data_dir?: string; port?: number } | Error;
}): LocatorIo {
  return {
    readReady: (dir) => (files.ready?.[dir] ? ready(files.ready[dir]!) : undefined),
    readToken: (dir) => files.tokens?.[dir],
    loadConfig: () => {
      if (files.config instanceof Error) throw files.config;
      const config = files.config ?? {};
      return {
        config: { data_dir: config.data_dir, server: { port: config.port ?? 0 } } as never,
        path: "/srv/agentd.jsonc",
        notes: [],
        envReferences: [],
      };
    },
  };
}

const broken = new ConfigError("invalid JSONC: invalid symbol", { location: { file: "/srv/agentd.jsonc", line: 3, column: 3 } });

describe("locateDaemon", () => {
  test("a URL with its token reads nothing else", () => {
    expect(locateDaemon({ url: "http://h:1/", token: "t", env: {} }, io({ config: broken }))).toEqual({
      url: "http://h:1",
      token: "t",
      tried: [],
    });
  });

  test("--data-dir's ready.json wins before any config is read", () => {
    const found = locateDaemon(
      { dataDir: "/d", env: {} },
      io({ ready: { "/d": "http://127.0.0.1:9001" }, tokens: { "/d": "tok" }, config: broken }),
    );
    expect(found).toMatchObject({ url: "http://127.0.0.1:9001", token: "tok" });
    expect(found.configProblem).toBeUndefined();
  });

  test("AGENTD_DATA_DIR likewise", () => {
    expect(locateDaemon({ env: { AGENTD_DATA_DIR: "/e" } }, io({ ready: { "/e": "http://127.0.0.1:9002" }, config: broken })).url).toBe(
      "http://127.0.0.1:9002",
    );
  });

  test("a broken config falls back to the default data dir's ready.json, and says so", () => {
    const cwdDefault = `${process.cwd()}/.agentd`;
    const found = locateDaemon({ env: {} }, io({ ready: { [cwdDefault]: "http://127.0.0.1:9003" }, config: broken }));
    expect(found.url).toBe("http://127.0.0.1:9003");
    expect(found.configProblem).toBe("/srv/agentd.jsonc:3:3: invalid JSONC: invalid symbol");
  });

  test("the config's data dir and port when it parses", () => {
    expect(
      locateDaemon({ env: {} }, io({ ready: { "/var/lib/agentd": "http://127.0.0.1:9004" }, config: { data_dir: "/var/lib/agentd" } })).url,
    ).toBe("http://127.0.0.1:9004");
    expect(locateDaemon({ env: {} }, io({ config: { port: 7171 } })).url).toBe("http://127.0.0.1:7171");
  });

  test("a named URL gets the local token only when it is the local daemon's", () => {
    const files = { ready: { "/d": "http://127.0.0.1:9005" }, tokens: { "/d": "tok" } };
    expect(locateDaemon({ url: "http://127.0.0.1:9005", dataDir: "/d", env: {} }, io(files)).token).toBe("tok");
    expect(locateDaemon({ url: "http://other:9005", dataDir: "/d", env: {} }, io(files)).token).toBeUndefined();
    expect(locateDaemon({ url: "http://other:9005", dataDir: "/x", env: {} }, io({ tokens: { "/x": "tok" } })).token).toBeUndefined();
  });

  test("nothing found behind a broken config: the unreachable message names the file, line, column and every place tried", () => {
    const target = locateDaemon({ dataDir: "/empty", env: {} }, io({ config: broken }));
    expect(target.url).toBe("http://127.0.0.1:7070");
    const message = new UnreachableError(target, new Error("Unable to connect")).message;
    expect(message).toStartWith("Cannot reach agentd at http://127.0.0.1:7070: Unable to connect. Is it running?");
    expect(message).toContain(
      "Looked for it through: --data-dir /empty: no ready.json; config: /srv/agentd.jsonc:3:3: invalid JSONC: invalid symbol; the default port: http://127.0.0.1:7070.",
    );
  });
});
