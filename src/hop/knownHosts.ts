import { createHash, createHmac } from "node:crypto";

/** Pure reading of OpenSSH known_hosts text: matching (plain, wildcard, hashed `|1|`), verdicts, fingerprints. */

export interface KnownHostEntry {
  line: number;
  marker?: "@revoked" | "@cert-authority";
  hosts: string;
  keyType: string;
  keyBase64: string;
}

export type HostKeyVerdict =
  | { status: "known"; line: number }
  | { status: "unknown" }
  | { status: "changed"; line: number; knownType: string }
  | { status: "revoked"; line: number };

export function parseKnownHosts(text: string): KnownHostEntry[] {
  const entries: KnownHostEntry[] = [];
  text.split("\n").forEach((raw, index) => {
    const fields = raw.trim().split(/\s+/);
    if (!fields[0] || fields[0].startsWith("#")) return;
    const marker = fields[0] === "@revoked" || fields[0] === "@cert-authority" ? (fields.shift() as KnownHostEntry["marker"]) : undefined;
    const [hosts, keyType, keyBase64] = fields;
    if (!hosts || !keyType || !keyBase64) return;
    entries.push({ line: index + 1, marker, hosts, keyType, keyBase64 });
  });
  return entries;
}

function wildcardMatches(pattern: string, name: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${source}$`, "i").test(name);
}

function hashedMatches(field: string, name: string): boolean {
  const [, kind, salt, hash] = field.split("|");
  if (kind !== "1" || !salt || !hash) return false;
  return createHmac("sha1", Buffer.from(salt, "base64")).update(name).digest("base64") === hash;
}

/** Whether a known_hosts host field (comma-separated patterns, `!negations`, or one hashed name) names `name`. */
export function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith("|")) return hashedMatches(field, name);
  let matched = false;
  for (const pattern of field.split(",")) {
    if (pattern.startsWith("!")) {
      if (wildcardMatches(pattern.slice(1), name)) return false;
    } else if (wildcardMatches(pattern, name)) {
      matched = true;
    }
  }
  return matched;
}

/** The key algorithm named inside an SSH public key blob (its first string). */
export function keyTypeOfBlob(blob: Buffer): string {
  const length = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + length).toString("latin1");
}

/** OpenSSH's `SHA256:…` fingerprint (unpadded base64 of the blob's SHA-256). */
export function fingerprintSha256(blob: Buffer): string {
  return `SHA256:${createHash("sha256").update(blob).digest("base64").replace(/=+$/, "")}`;
}

/**
 * The verdict for the key a host presented. A key of the same type that differs from a listed
 * one is "changed" — including when a different type is listed only, which `knownKeyTypes`
 * prevents by asking the server for the listed types (as OpenSSH does).
 */
export function verifyHostKey(entries: readonly KnownHostEntry[], name: string, blob: Buffer): HostKeyVerdict {
  const base64 = blob.toString("base64");
  const forHost = entries.filter((entry) => entry.marker !== "@cert-authority" && hostFieldMatches(entry.hosts, name));
  const revoked = entries.find((entry) => entry.marker === "@revoked" && entry.keyBase64 === base64);
  if (revoked) return { status: "revoked", line: revoked.line };
  const plain = forHost.filter((entry) => entry.marker === undefined);
  const same = plain.find((entry) => entry.keyBase64 === base64);
  if (same) return { status: "known", line: same.line };
  const other = plain[0];
  if (other) return { status: "changed", line: other.line, knownType: other.keyType };
  return { status: "unknown" };
}

/** Key types listed for a host, so the handshake asks for one of those. */
export function knownKeyTypes(entries: readonly KnownHostEntry[], name: string): string[] {
  const types = entries.filter((entry) => entry.marker === undefined && hostFieldMatches(entry.hosts, name)).map((entry) => entry.keyType);
  return [...new Set(types)];
}

/** ssh2 host key algorithm names for a known_hosts key type (RSA keys sign with SHA-2 variants too). */
export function hostKeyAlgorithms(keyTypes: readonly string[]): string[] {
  return keyTypes.flatMap((type) => (type === "ssh-rsa" ? ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] : [type]));
}

export function knownHostsLine(name: string, blob: Buffer): string {
  return `${name} ${keyTypeOfBlob(blob)} ${blob.toString("base64")}`;
}
