import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PROJECT_ROOT, runAgentd } from "../support/binary.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(removeTempDirs);

const COMMANDS = [
  ["serve"],
  ["health"],
  ["status"],
  ["init"],
  ["config", "check"],
  ["version"],
  ["logs"],
  ["incidents"],
  ["silence"],
  ["run"],
  ["debug"],
];
const VERSION = (JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { version: string }).version;
const NO_STACK = /^\s+at\s|\.ts:\d+:\d+|node_modules/m;

// Runs in an empty directory with an empty HOME, so no developer config or daemon is picked up.
const run = (args: string[]) => {
  const dir = makeTempDir("agentd-cli-");
  return runAgentd(args, { cwd: dir, env: { HOME: dir } });
};

describe("agentd CLI usage", () => {
  for (const path of COMMANDS) {
    test(`agentd ${path.join(" ")} --help prints its usage and exits 0`, async () => {
      const result = await run([...path, "--help"]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toStartWith(`Usage: agentd ${path.join(" ")}`);
      expect(result.stdout).toContain("-h, --help");
      const short = await run([...path, "-h"]);
      expect(short.code).toBe(0);
      expect(short.stdout).toBe(result.stdout);
    }, 60_000);

    test(`agentd ${path.join(" ")} --bogus is a usage error: exit 2, one clear message, no stack`, async () => {
      const result = await run([...path, "--bogus"]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toBe(`agentd ${path.join(" ")}: unknown option '--bogus'\nRun 'agentd ${path.join(" ")} --help' for usage.\n`);
    }, 60_000);
  }

  test("--help and help list every command, exit 0", async () => {
    for (const args of [["--help"], ["help"]]) {
      const result = await run(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe("");
      for (const path of COMMANDS) expect(result.stdout).toContain(`  ${path.join(" ")} `);
    }
  }, 60_000);

  test("no command at all prints the list and exits 2", async () => {
    const result = await run([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toContain("Usage: agentd <command> [options]");
  }, 60_000);

  test("an unknown command exits 2 and points at --help", async () => {
    const result = await run(["frobnicate"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`agentd: unknown command "frobnicate"; run 'agentd --help' for the list\n`);
  }, 60_000);

  test("half of a two-word command suggests the whole one", async () => {
    const result = await run(["config"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`agentd: unknown command "config"; try 'agentd config check'\n`);
    const wrong = await run(["config", "chekc"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toBe(`agentd: unknown command "config chekc"; try 'agentd config check'\n`);
  }, 60_000);

  test("a mistyped command gets a 'did you mean'", async () => {
    const result = await run(["confg"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`agentd: unknown command "confg"; did you mean 'agentd config'?\n`);
    const incidents = await run(["incidnets"]);
    expect(incidents.stderr).toBe(`agentd: unknown command "incidnets"; did you mean 'agentd incidents'?\n`);
  }, 60_000);

  test("a group's --help lists its commands and exits 0", async () => {
    for (const flag of ["--help", "-h"]) {
      const result = await run(["config", flag]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toStartWith("Usage: agentd config <command> [options]\n");
      expect(result.stdout).toContain("  config check  Validate the config file.");
    }
  }, 60_000);

  test("serve --help hides the supervisor's internal flags", async () => {
    const result = await run(["serve", "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("--worker");
    expect(result.stdout).not.toContain("--resolve-config");
    expect(result.stdout).toContain("--log-format");
  }, 60_000);

  test("an unexpected positional argument is a usage error", async () => {
    const result = await run(["version", "extra"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toStartWith("agentd version: unexpected argument 'extra'");
    expect(result.stderr).not.toMatch(NO_STACK);
  }, 60_000);

  test("bad option values are usage errors with exit 2", async () => {
    const cases: Array<[string[], string]> = [
      [["serve", "--port", "http"], `agentd serve: Cannot use "http" as --port: expected an integer from 0 to 65535\n`],
      [["serve", "--port", "70000"], `agentd serve: Cannot use "70000" as --port: expected an integer from 0 to 65535\n`],
      [["serve", "--log-level", "loud"], `agentd serve: Cannot use "loud" as --log-level: expected one of debug, info, warn, error\n`],
      [
        ["health", "--url", "http://127.0.0.1:9", "--wait", "soon"],
        `agentd health: Cannot read "soon" as a duration: expected a number with ms, s, m or h (e.g. 30s)\n`,
      ],
      [["serve", "--port"], `agentd serve: Option '-p, --port <value>' argument missing\n`],
    ];
    for (const [args, message] of cases) {
      const result = await run(args);
      expect({ args, code: result.code, stderr: `${result.stderr.split("\n")[0]}\n` }).toEqual({ args, code: 2, stderr: message });
      expect(result.stderr).not.toMatch(NO_STACK);
    }
  }, 60_000);
});

describe("agentd version", () => {
  test("prints the package version and the runtime", async () => {
    const result = await run(["version"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(new RegExp(`^agentd ${VERSION.replace(/\./g, "\\.")} \\(bun \\d+\\.\\d+\\.\\d+, linux-x64\\)\\n$`));
    expect((await run(["--version"])).stdout).toBe(result.stdout);
  }, 60_000);

  test("--json prints one JSON object", async () => {
    const result = await run(["version", "--json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      version: VERSION,
      bun: expect.stringMatching(/^\d+\.\d+\.\d+/),
      platform: "linux",
      arch: "x64",
    });
  }, 60_000);
});
