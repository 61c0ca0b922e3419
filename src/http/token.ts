import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface ApiToken {
  token: string;
  path: string;
  created: boolean;
}

/** Reads <data_dir>/token, creating it (mode 0600) at first start. */
export function ensureApiToken(dataDir: string): ApiToken {
  const path = join(dataDir, "token");
  if (existsSync(path)) {
    const token = readFileSync(path, "utf8").trim();
    if (token.length >= 16) return { token, path, created: false };
  }
  mkdirSync(dataDir, { recursive: true });
  const token = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { token, path, created: true };
}

export function isLoopbackAddress(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host) || host === "::ffff:127.0.0.1";
}
