import { remotePathExpression } from "./shellQuote.ts";

/** What the probe learned about a remote host; parsed from `key=value` lines. */
export interface RemoteFacts {
  /** `uname -s`, e.g. Linux, Darwin. */
  os: string;
  /** `uname -m`, e.g. x86_64, aarch64. */
  machine: string;
  libc: "glibc" | "musl" | "unknown";
  home: string;
  freeKb: number | null;
  gzip: boolean;
  setsid: boolean;
  shaTool: "sha256sum" | "openssl" | "none";
  installed: { sha256: string | null; versionJson: string | null; runs: boolean } | null;
}

/**
 * The probe, in POSIX sh only (BusyBox works): one exec channel, every answer on its own line.
 * `remoteDir` may start with `~/`.
 */
export function probeScript(remoteDir: string): string {
  const dir = remotePathExpression(remoteDir);
  return [
    `d=${dir}; b="$d/bin/agentd"`,
    `echo "uname=$(uname -sm 2>/dev/null)"`,
    `if ls /lib/ld-musl-* >/dev/null 2>&1; then echo libc=musl; elif ldd --version 2>&1 | grep -qi musl; then echo libc=musl; elif ldd --version 2>&1 | grep -qiE 'glibc|gnu libc|gnu c library'; then echo libc=glibc; elif ls /lib*/ld-linux* /lib/*/ld-linux* >/dev/null 2>&1; then echo libc=glibc; else echo libc=unknown; fi`,
    `echo "home=$HOME"`,
    `if [ -d "$d" ]; then f="$d"; else f="$HOME"; fi; echo "free_kb=$(df -Pk "$f" 2>/dev/null | awk 'NR==2 {print $4}')"`,
    `command -v gzip >/dev/null 2>&1 && echo gzip=1`,
    `command -v setsid >/dev/null 2>&1 && echo setsid=1`,
    `if command -v sha256sum >/dev/null 2>&1; then echo sha=sha256sum; elif command -v openssl >/dev/null 2>&1; then echo sha=openssl; else echo sha=none; fi`,
    `if [ -f "$b" ]; then echo installed=1; ${shaCommand('"$b"', "installed_sha=")}; v=$("$b" version --json 2>/dev/null); echo "version_exit=$?"; echo "version_json=$(echo "$v" | head -n 1)"; fi`,
    "true",
  ].join("\n");
}

/** A sh command printing `<prefix><hex sha256 of file>` with whichever tool exists. */
export function shaCommand(fileExpression: string, prefix: string): string {
  return `if command -v sha256sum >/dev/null 2>&1; then echo "${prefix}$(sha256sum ${fileExpression} | awk '{print $1}')"; elif command -v openssl >/dev/null 2>&1; then echo "${prefix}$(openssl dgst -sha256 ${fileExpression} | awk '{print $NF}')"; else echo "${prefix}"; fi`;
}

export function parseProbeOutput(text: string): RemoteFacts {
  const values = new Map<string, string>();
  for (const line of text.split("\n")) {
    const eq = line.indexOf("=");
    if (eq > 0) values.set(line.slice(0, eq).trim(), line.slice(eq + 1).trim());
  }
  const [os = "", machine = ""] = (values.get("uname") ?? "").split(/\s+/);
  const libc = values.get("libc");
  const freeKb = Number(values.get("free_kb"));
  const sha = values.get("sha");
  const installedSha = values.get("installed_sha");
  return {
    os,
    machine,
    libc: libc === "glibc" || libc === "musl" ? libc : "unknown",
    home: values.get("home") ?? "",
    freeKb: values.get("free_kb") && Number.isFinite(freeKb) ? freeKb : null,
    gzip: values.get("gzip") === "1",
    setsid: values.get("setsid") === "1",
    shaTool: sha === "sha256sum" || sha === "openssl" ? sha : "none",
    installed:
      values.get("installed") === "1"
        ? {
            sha256: installedSha && /^[0-9a-f]{64}$/.test(installedSha) ? installedSha : null,
            versionJson: values.get("version_json") || null,
            runs: values.get("version_exit") === "0" && Boolean(values.get("version_json")),
          }
        : null,
  };
}
