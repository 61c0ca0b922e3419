import type { RemoteFacts } from "./remoteProbe.ts";

/** The platform a compiled agentd binary was built for. */
export interface LocalPlatform {
  platform: string;
  arch: string;
  libc: "glibc" | "musl" | "unknown";
}

const MACHINE_TO_ARCH: Record<string, string> = { x86_64: "x64", amd64: "x64", aarch64: "arm64", arm64: "arm64" };
const OS_TO_PLATFORM: Record<string, string> = { Linux: "linux", Darwin: "darwin" };

/**
 * Why the local binary cannot run on the remote host, or undefined when it should. An unknown
 * remote libc is not a reason: starting it decides.
 */
export function platformMismatch(local: LocalPlatform, remote: Pick<RemoteFacts, "os" | "machine" | "libc">): string | undefined {
  const platform = OS_TO_PLATFORM[remote.os];
  if (platform !== local.platform) return `the remote OS is ${remote.os || "unknown"}, this binary is built for ${local.platform}`;
  const arch = MACHINE_TO_ARCH[remote.machine];
  if (arch !== local.arch) return `the remote CPU is ${remote.machine || "unknown"}, this binary is built for ${local.arch}`;
  if (local.platform === "linux" && remote.libc !== "unknown" && local.libc !== "unknown" && remote.libc !== local.libc) {
    return `the remote C library is ${remote.libc}, this binary needs ${local.libc}`;
  }
  return undefined;
}
