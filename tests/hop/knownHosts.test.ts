import { describe, expect, test } from "bun:test";
import { createHash, createHmac, randomBytes } from "node:crypto";
import { knownHostsName } from "../../src/hop/destination.ts";
import {
  fingerprintSha256,
  hostFieldMatches,
  hostKeyAlgorithms,
  keyTypeOfBlob,
  knownHostsLine,
  knownKeyTypes,
  parseKnownHosts,
  verifyHostKey,
} from "../../src/hop/knownHosts.ts";

function blob(type: string, seed: string): Buffer {
  const name = Buffer.from(type);
  const body = createHash("sha256").update(seed).digest();
  const out = Buffer.alloc(8 + name.length + body.length);
  out.writeUInt32BE(name.length, 0);
  name.copy(out, 4);
  out.writeUInt32BE(body.length, 4 + name.length);
  body.copy(out, 8 + name.length);
  return out;
}

function hashed(name: string): string {
  const salt = randomBytes(20);
  return `|1|${salt.toString("base64")}|${createHmac("sha1", salt).update(name).digest("base64")}`;
}

const keyA = blob("ssh-ed25519", "a");
const keyB = blob("ssh-ed25519", "b");

describe("known_hosts", () => {
  test("port 22 uses the bare host, other ports [host]:port", () => {
    expect(knownHostsName("example.com", 22)).toBe("example.com");
    expect(knownHostsName("10.0.0.1", 2222)).toBe("[10.0.0.1]:2222");
  });

  test("plain, wildcard, negated and hashed host fields", () => {
    expect(hostFieldMatches("a.example.com,b.example.com", "b.example.com")).toBe(true);
    expect(hostFieldMatches("*.example.com", "x.example.com")).toBe(true);
    expect(hostFieldMatches("*.example.com,!bad.example.com", "bad.example.com")).toBe(false);
    expect(hostFieldMatches("[10.0.0.1]:2222", "10.0.0.1")).toBe(false);
    expect(hostFieldMatches(hashed("[10.0.0.1]:2222"), "[10.0.0.1]:2222")).toBe(true);
    expect(hostFieldMatches(hashed("[10.0.0.1]:2222"), "[10.0.0.1]:2223")).toBe(false);
  });

  test("verdicts: known, unknown, changed, revoked", () => {
    const text = [
      "# comment",
      `${hashed("host1")} ssh-ed25519 ${keyA.toString("base64")}`,
      `[host2]:2200 ssh-ed25519 ${keyA.toString("base64")} comment`,
      `@revoked * ssh-ed25519 ${blob("ssh-ed25519", "stolen").toString("base64")}`,
    ].join("\n");
    const entries = parseKnownHosts(text);
    expect(verifyHostKey(entries, "host1", keyA)).toEqual({ status: "known", line: 2 });
    expect(verifyHostKey(entries, "[host2]:2200", keyA).status).toBe("known");
    expect(verifyHostKey(entries, "host3", keyA)).toEqual({ status: "unknown" });
    expect(verifyHostKey(entries, "host1", keyB)).toEqual({ status: "changed", line: 2, knownType: "ssh-ed25519" });
    expect(verifyHostKey(entries, "host3", blob("ssh-ed25519", "stolen"))).toEqual({ status: "revoked", line: 4 });
  });

  test("known key types steer the handshake; RSA maps to its SHA-2 signatures", () => {
    const entries = parseKnownHosts(`h ssh-rsa AAAA\nh ecdsa-sha2-nistp256 AAAA\nother ssh-ed25519 AAAA\n`);
    expect(knownKeyTypes(entries, "h")).toEqual(["ssh-rsa", "ecdsa-sha2-nistp256"]);
    expect(hostKeyAlgorithms(["ssh-rsa", "ssh-ed25519"])).toEqual(["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa", "ssh-ed25519"]);
  });

  test("fingerprint and the appended line match OpenSSH's format", () => {
    expect(keyTypeOfBlob(keyA)).toBe("ssh-ed25519");
    expect(fingerprintSha256(keyA)).toBe(`SHA256:${createHash("sha256").update(keyA).digest("base64").replace(/=+$/, "")}`);
    expect(knownHostsLine("[h]:2", keyA)).toBe(`[h]:2 ssh-ed25519 ${keyA.toString("base64")}`);
  });
});
