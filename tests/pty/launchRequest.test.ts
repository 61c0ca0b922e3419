import { describe, expect, test } from "bun:test";
import { exactlyAsShown, type LaunchSettings, launchRequest } from "../../src/pty/spawnRequest.ts";

const settings: LaunchSettings = { passEnv: [], withheldEnv: ["DB_PASSWORD_SOURCE"], loginShell: false, umask: undefined };
const inherited = { HOME: "/home/op", PATH: "/usr/bin", DB_PASSWORD_SOURCE: "x", API_TOKEN: "secret" };

describe("launchRequest", () => {
  test("a command runs its shell with -c; the environment has the defaults and the caller's, never a secret", () => {
    const request = launchRequest("s1", { cmd: "ls -l", env: { LANG: "C" } }, "/bin/sh", {}, inherited, settings);
    expect(request.sessionId).toBe("s1");
    expect(request.kind).toBe("command");
    expect(request.words).toEqual(["/bin/sh", "-c", "ls -l"]);
    expect(request.env).toMatchObject({ HOME: "/home/op", PATH: "/usr/bin", PAGER: "cat", LANG: "C" });
    expect(request.env).not.toHaveProperty("DB_PASSWORD_SOURCE");
    expect(request.env).not.toHaveProperty("API_TOKEN");
    // Nothing not asked for: no working directory, umask, call or credential keys at all.
    expect(Object.keys(request).sort()).toEqual(["env", "kind", "sessionId", "words"]);
  });

  test("the login shell comes from the config unless the call says otherwise", () => {
    const login = { ...settings, loginShell: true };
    expect(launchRequest("s", { cmd: "id" }, "/bin/bash", {}, {}, login).words).toEqual(["/bin/bash", "-lc", "id"]);
    expect(launchRequest("s", { cmd: "id", login: false }, "/bin/bash", {}, {}, login).words).toEqual(["/bin/bash", "-c", "id"]);
    expect(launchRequest("s", { cmd: "id", login: true }, "/bin/bash", {}, {}, settings).words).toEqual(["/bin/bash", "-lc", "id"]);
  });

  test("a privileged call without words is a terminal through the shell; with words, an escalation of exactly them", () => {
    const terminal = launchRequest("s", { cmd: "bash" }, "/bin/bash", { privileged: true, credential: "tok" }, {}, settings);
    expect(terminal.kind).toBe("terminal");
    expect(terminal.words).toEqual(["/bin/bash", "-c", "bash"]);
    expect(terminal.credential).toBe("tok");
    const call = { recordId: "r1", sessionId: "agent-session" };
    const escalation = launchRequest("s", { cmd: "sudo id" }, "/bin/bash", { privileged: true, argv: ["sudo", "id"], call }, {}, settings);
    expect(escalation.kind).toBe("escalation");
    expect(escalation.words).toEqual(["sudo", "id"]);
    expect(escalation.call).toEqual(call);
    // Words without `privileged` do not make an escalation: the command runs through its shell.
    const unprivileged = launchRequest("s", { cmd: "id" }, "/bin/sh", { argv: ["sudo", "id"] }, {}, settings);
    expect(unprivileged).toMatchObject({ kind: "command", words: ["/bin/sh", "-c", "id"] });
  });

  test("the working directory and the operator's umask are passed when set", () => {
    const request = launchRequest("s", { cmd: "pwd", workdir: "/tmp" }, "/bin/sh", {}, {}, { ...settings, umask: 0o022 });
    expect(request.cwd).toBe("/tmp");
    expect(request.umask).toBe(0o022);
  });
});

describe("exactlyAsShown", () => {
  test("drops the model's shell and environment and never sources a login profile", () => {
    const shown = exactlyAsShown({ cmd: "sudo id", shell: "/tmp/evil", env: { BASH_ENV: "/tmp/x" }, login: true, workdir: "/srv" });
    expect(shown).toEqual({ cmd: "sudo id", login: false, workdir: "/srv" });
  });
});
