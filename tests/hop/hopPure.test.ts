import { afterAll, describe, expect, test } from "bun:test";
import { formatDestination, parseDestination } from "../../src/hop/destination.ts";
import { platformMismatch } from "../../src/hop/platformMatch.ts";
import { classifyRemoteAuth } from "../../src/hop/remoteAuth.ts";
import { parseProbeOutput, probeScript } from "../../src/hop/remoteProbe.ts";
import { remotePathExpression, resolveRemotePath, shellQuote } from "../../src/hop/shellQuote.ts";
import { ProgressRenderer, describeProgress } from "../../src/hop/uploadProgress.ts";
import { planAuth } from "../../src/hop/sshAuth.ts";
import { statusOf } from "../../src/core/errors/index.ts";
import { makeTempDir, removeTempDirs } from "../support/tempDir.ts";

afterAll(() => removeTempDirs());

describe("destinations", () => {
  test("user@host[:port], a bare host, and bracketed IPv6", () => {
    expect(parseDestination("ops@db1:2222", "me")).toEqual({ user: "ops", host: "db1", port: 2222 });
    expect(parseDestination("db1", "me")).toEqual({ user: "me", host: "db1", port: 22 });
    expect(parseDestination("ops@[::1]:2200", "me")).toEqual({ user: "ops", host: "::1", port: 2200 });
    expect(formatDestination({ user: "ops", host: "::1", port: 2200 })).toBe("ops@[::1]:2200");
    expect(formatDestination({ user: "ops", host: "db1", port: 22 })).toBe("ops@db1");
  });

  test("bad input is a clear hop_bad_destination", () => {
    for (const text of ["ops@", "ops@db1:0", "ops@db1:99999", "ops@a:b:c", "ops@db 1"]) {
      expect(() => parseDestination(text, "me")).toThrow(expect.objectContaining({ code: "hop_bad_destination" }));
    }
  });
});

describe("the identity file a hop names", () => {
  test("one that cannot be read or used is the caller's to fix: 400 hop_identity_unusable naming the file", () => {
    const dir = makeTempDir("agentd-hop-identity-");
    const parse = () => new Error("Unsupported key format");
    for (const [identity, said] of [
      [`${dir}/missing`, "Cannot read the identity file"],
      [dir, "Cannot read the identity file"],
      ["/etc/hostname", "Cannot use the identity file"],
    ] as const) {
      const error = (() => {
        try {
          planAuth("ops", { identity, identityFiles: [] }, parse);
        } catch (thrown) {
          return thrown as { code: string; message: string; param?: string };
        }
        throw new Error(`${identity} was taken`);
      })();
      expect(error.code).toBe("hop_identity_unusable");
      expect(statusOf(error.code as "hop_identity_unusable")).toBe(400);
      expect(error.message).toStartWith(`${said} ${identity}: `);
    }
  });
});

describe("remote agentd auth", () => {
  test("ok only when a request without the token is refused and one with it is not", () => {
    expect(classifyRemoteAuth(401, 200)).toBe("ok");
    expect(classifyRemoteAuth(401, 503)).toBe("ok");
    expect(classifyRemoteAuth(200, 200)).toBe("open");
    expect(classifyRemoteAuth(503, 503)).toBe("open");
    expect(classifyRemoteAuth(401, 401)).toBe("rejected");
  });
});

describe("remote probe", () => {
  test("the script is POSIX sh that sh -n accepts", async () => {
    const check = Bun.spawn(["sh", "-n"], { stdin: new TextEncoder().encode(probeScript("~/.agentd")), stderr: "pipe" });
    expect(await check.exited).toBe(0);
  });

  test("the script runs under sh and reports this host", async () => {
    const run = Bun.spawn(["sh", "-c", probeScript("~/.agentd-probe-test")], { stdout: "pipe" });
    const facts = parseProbeOutput(await new Response(run.stdout).text());
    expect(facts.os).toBe("Linux");
    expect(facts.home.length).toBeGreaterThan(0);
    expect(facts.freeKb).toBeGreaterThan(0);
    expect(facts.installed).toBeNull();
  });

  test("parses an installed binary, BusyBox-like answers, and missing fields", () => {
    const facts = parseProbeOutput(
      [
        "uname=Linux aarch64",
        "libc=musl",
        "home=/root",
        "free_kb=1024",
        "gzip=1",
        "sha=none",
        "installed=1",
        "installed_sha=",
        "version_exit=126",
        "version_json=",
      ].join("\n"),
    );
    expect(facts).toMatchObject({
      os: "Linux",
      machine: "aarch64",
      libc: "musl",
      home: "/root",
      freeKb: 1024,
      gzip: true,
      setsid: false,
      shaTool: "none",
    });
    expect(facts.installed).toEqual({ sha256: null, versionJson: null, runs: false });
    expect(parseProbeOutput("").freeKb).toBeNull();
  });
});

describe("platform match", () => {
  const local = { platform: "linux", arch: "x64", libc: "glibc" as const };
  test("same OS, CPU and libc run; anything else says why not", () => {
    expect(platformMismatch(local, { os: "Linux", machine: "x86_64", libc: "glibc" })).toBeUndefined();
    expect(platformMismatch(local, { os: "Linux", machine: "x86_64", libc: "unknown" })).toBeUndefined();
    expect(platformMismatch(local, { os: "Linux", machine: "aarch64", libc: "glibc" })).toContain("aarch64");
    expect(platformMismatch(local, { os: "Darwin", machine: "x86_64", libc: "unknown" })).toContain("Darwin");
    expect(platformMismatch(local, { os: "Linux", machine: "x86_64", libc: "musl" })).toContain("musl");
  });
});

describe("shell paths", () => {
  test("~ expands remotely, the rest is quoted", async () => {
    expect(shellQuote("it's")).toBe(`'it'\\''s'`);
    expect(remotePathExpression("~/a b")).toBe(`"$HOME"/'a b'`);
    expect(resolveRemotePath("~/.agentd", "/home/x/")).toBe("/home/x/.agentd");
    const run = Bun.spawn(["sh", "-c", `echo ${remotePathExpression("~/it's here")}`], { stdout: "pipe", env: { HOME: "/h" } });
    expect((await new Response(run.stdout).text()).trim()).toBe("/h/it's here");
  });
});

describe("upload progress", () => {
  test("without a TTY: one line per 10 % step", () => {
    const renderer = new ProgressRenderer(false);
    const lines = [0, 5, 10, 15, 55, 100].map((bytes) => renderer.render({ bytes, total: 100, elapsedMs: 1000 })).filter(Boolean);
    expect(lines).toHaveLength(4);
    expect(lines.at(-1)).toStartWith("upload 100%");
  });

  test("on a TTY: a redrawn bar, throttled, ending with a newline", () => {
    const renderer = new ProgressRenderer(true, 100);
    expect(renderer.render({ bytes: 10, total: 100, elapsedMs: 0 })).toStartWith("\r[###");
    expect(renderer.render({ bytes: 20, total: 100, elapsedMs: 50 })).toBe("");
    expect(renderer.render({ bytes: 100, total: 100, elapsedMs: 60 })).toEndWith("\n");
    expect(describeProgress({ bytes: 1048576, total: 2097152, elapsedMs: 1000 })).toBe("50% 1.0 MiB/2.0 MiB 1.0 MiB/s ETA 00:01");
  });
});
