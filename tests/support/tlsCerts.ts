/**
 * Throwaway TLS certificates for tests, made with the openssl CLI in a directory the test owns
 * (makeTempDir): a CA, and leaves it signs for a subjectAltName list.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface KeyPair {
  cert: string;
  key: string;
}

function openssl(dir: string, ...args: string[]): void {
  const run = Bun.spawnSync(["openssl", ...args], { cwd: dir, stdout: "pipe", stderr: "pipe" });
  if (run.exitCode !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${run.stderr.toString()}`);
}

const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

/** A self-signed CA, `<dir>/<name>.pem` and `.key`; returns its certificate (PEM). */
export function makeCa(dir: string, name: string): string {
  openssl(dir, "req", "-x509", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.pem`, "-days", "2", "-subj", `/CN=${name}`);
  return readFileSync(join(dir, `${name}.pem`), "utf8");
}

/** A leaf for `names` (a subjectAltName list) signed by the CA `ca` in `dir`, valid for `days`: -1 makes one that expired a day ago. */
export function makeLeaf(dir: string, name: string, ca: string, names: string, days: number): KeyPair {
  openssl(dir, "req", ...EC_KEY, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`);
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${names}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  openssl(
    dir,
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.pem`,
    "-CAkey",
    `${ca}.key`,
    "-set_serial",
    String(Date.now()),
    "-days",
    String(days),
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.pem`,
  );
  return { cert: readFileSync(join(dir, `${name}.pem`), "utf8"), key: readFileSync(join(dir, `${name}.key`), "utf8") };
}
