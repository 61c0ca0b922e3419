import { describe, expect, test } from "bun:test";
import { chooseEviction } from "../../src/pty/evictionPolicy.ts";
import { looksSecret } from "../../src/core/process/index.ts";
import { childEnv, clampYield, EXEC_YIELD, resolveShell, shellArgv, STDIN_YIELD } from "../../src/pty/spawnRequest.ts";
import { stripAnsi } from "../../src/core/text/index.ts";
import { decodeWaitStatus } from "../../src/pty/waitStatus.ts";

describe("decodeWaitStatus", () => {
  test("a normal exit gives its code", () => {
    expect(decodeWaitStatus(0)).toEqual({ exitCode: 0 });
    expect(decodeWaitStatus(3 << 8)).toEqual({ exitCode: 3 });
  });

  test("a signal gives 128 + its number and its name", () => {
    expect(decodeWaitStatus(2)).toEqual({ exitCode: 130, signal: "SIGINT" });
    expect(decodeWaitStatus(9 | 0x80)).toEqual({ exitCode: 137, signal: "SIGKILL" }); // core dump bit set
  });
});

describe("chooseEviction", () => {
  const session = (id: string, lastUsedAt: number, running = true) => ({ id, lastUsedAt, running });

  test("picks the least recently used outside the 8 most recent", () => {
    const sessions = Array.from({ length: 10 }, (_, index) => session(`s${index}`, index));
    expect(chooseEviction(sessions)).toBe("s0");
  });

  test("prefers an exited session over an older running one", () => {
    const sessions = [
      session("old", 0),
      session("exited", 1, false),
      ...Array.from({ length: 8 }, (_, index) => session(`r${index}`, 10 + index)),
    ];
    expect(chooseEviction(sessions)).toBe("exited");
  });

  test("never picks one of the most recent, even an exited one", () => {
    const sessions = [session("old", 0), ...Array.from({ length: 8 }, (_, index) => session(`r${index}`, 10 + index, false))];
    expect(chooseEviction(sessions)).toBe("old");
    expect(chooseEviction(sessions.slice(1))).toBeUndefined();
  });
});

describe("spawn request", () => {
  test("the shell is the requested one, then the configured one, then $SHELL, then bash", () => {
    expect(resolveShell("/bin/zsh", "/bin/sh", "/bin/fish")).toBe("/bin/zsh");
    expect(resolveShell(undefined, "/bin/sh", "/bin/fish")).toBe("/bin/sh");
    expect(resolveShell(undefined, undefined, "/bin/fish")).toBe("/bin/fish");
    expect(resolveShell(undefined, undefined, undefined)).toBe("/bin/bash");
    // agentd started as an account made with --shell /usr/sbin/nologin: its $SHELL runs nothing.
    for (const noLogin of ["/usr/sbin/nologin", "/sbin/nologin", "/bin/false", "/usr/bin/false"])
      expect(resolveShell(undefined, undefined, noLogin)).toBe("/bin/bash");
    expect(resolveShell(undefined, "/bin/sh", "/usr/sbin/nologin")).toBe("/bin/sh");
  });

  test("argv runs the command through -c, or -lc for a login shell", () => {
    expect(shellArgv("/bin/bash", false, "ls -l")).toEqual(["/bin/bash", "-c", "ls -l"]);
    expect(shellArgv("/bin/bash", true, "ls -l")).toEqual(["/bin/bash", "-lc", "ls -l"]);
  });

  test("the env adds pager and colour defaults that the caller may override", () => {
    const env = childEnv({ HOME: "/root", PAGER: "less", UNSET: undefined }, { NO_COLOR: "0" });
    expect(env).toEqual({ HOME: "/root", PAGER: "cat", GIT_PAGER: "cat", NO_COLOR: "0", TERM: "xterm-256color" });
  });

  test("the daemon's secrets and internal variables stay out of children unless passed on purpose", () => {
    const inherited = {
      PATH: "/bin",
      OPENAI_API_KEY: "sk-1",
      AWS_SECRET_ACCESS_KEY: "a",
      GITHUB_TOKEN: "gh-1",
      AGENTD_TOKEN: "t",
      DB_PASSWORD: "p",
      AGENTD_SUPERVISOR_PID: "7",
      LANG: "C.UTF-8",
      PWD: "/srv",
      OLDPWD: "/",
      LLM_UPSTREAM: "named-by-the-config",
    };
    const env = childEnv(inherited, { GITHUB_TOKEN: "given-by-caller" }, { pass: ["DB_PASSWORD"], withheld: ["LLM_UPSTREAM"] });
    expect(env).toMatchObject({
      PATH: "/bin",
      LANG: "C.UTF-8",
      PWD: "/srv",
      OLDPWD: "/",
      DB_PASSWORD: "p",
      GITHUB_TOKEN: "given-by-caller",
    });
    for (const hidden of ["OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "AGENTD_TOKEN", "AGENTD_SUPERVISOR_PID", "LLM_UPSTREAM"])
      expect(env).not.toHaveProperty(hidden);
  });

  test("secret-looking names are matched broadly, PATH and PWD are not", () => {
    const secret = [
      "PGPASSWORD",
      "MYSQL_PWD",
      "DATABASE_URL",
      "GITHUB_PAT",
      "SLACK_WEBHOOK_URL",
      "SENTRY_DSN",
      "LLM_PROVIDER_CRED",
      "SSH_AUTH_SOCK",
      "HTTP_COOKIE",
      "RAILS_SESSION_KEY",
      "NPM_TOKEN",
      "STRIPE_SECRET",
      "GPG_PRIVATE",
    ];
    const plain = ["PATH", "PWD", "OLDPWD", "HOME", "LANG", "TERM", "SHELL", "USER", "PATCH_LEVEL", "PAGER"];
    for (const name of secret) expect([name, looksSecret(name)]).toEqual([name, true]);
    for (const name of plain) expect([name, looksSecret(name)]).toEqual([name, false]);
  });

  test("yield times are clamped, with defaults", () => {
    expect(clampYield(undefined, EXEC_YIELD)).toBe(10_000);
    expect(clampYield(1, EXEC_YIELD)).toBe(250);
    expect(clampYield(999_999, EXEC_YIELD)).toBe(30_000);
    expect(clampYield(undefined, STDIN_YIELD)).toBe(250);
    expect(clampYield(0, STDIN_YIELD)).toBe(50);
  });
});

describe("stripAnsi", () => {
  test("removes CSI, OSC and two-byte escapes, keeps text and line ends", () => {
    expect(stripAnsi("\x1b[31;1mred\x1b[0m\r\n\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\ \x1b(Bx\x1b=")).toBe("red\r\nlink x");
  });
});
