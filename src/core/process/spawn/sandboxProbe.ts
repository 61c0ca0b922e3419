import { closeSync, constants, existsSync, openSync } from "node:fs";
import { nativeSpawn, waitForChild } from "./nativeSpawn.ts";
import { SpawnError, type SpawnStage } from "./spawnError.ts";

/** Why a stage fails on a host that refuses unprivileged namespaces, said for the operator. */
const HINTS: Partial<Record<SpawnStage, Record<number, string>>> = {
  namespaces: {
    1: "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone=0, a seccomp filter, or a chroot)",
    22: "the kernel has no user or pid namespaces",
    28: "user.max_user_namespaces is 0 or used up",
  },
  id_map: { 1: "agentd may not map its uid in a user namespace (AppArmor's kernel.apparmor_restrict_unprivileged_userns?)" },
  mounts: { 1: "the user namespace may not mount (AppArmor's kernel.apparmor_restrict_unprivileged_userns?)" },
  proc: { 1: "a new /proc may not be mounted: agentd's own /proc is partly covered (a container)" },
};

let verdict: string | undefined | null = null;

/**
 * Whether nativeSpawn's `sandbox` works here: undefined when it does, else why not. Probed once, by
 * running `true` in an empty sandbox, since only trying tells whether user namespaces are allowed
 * (sysctls, AppArmor, seccomp, a container's /proc).
 */
export function namespaceSandboxAvailable(): string | undefined {
  if (verdict === null) verdict = probe();
  return verdict;
}

function probe(): string | undefined {
  if (process.geteuid?.() === 0)
    return "agentd runs as root: commands run as the command user instead (the sandbox keeps no capability from root)";
  const program = ["/bin/true", "/usr/bin/true"].find((path) => existsSync(path));
  if (!program) return "there is no /bin/true to probe the sandbox with";
  const devNull = openSync("/dev/null", constants.O_RDWR);
  let pid: number;
  try {
    pid = nativeSpawn({
      path: program,
      argv: ["true"],
      env: {},
      cwd: "/",
      stdio: { fds: [devNull, devNull, devNull] },
      noNewPrivs: true,
      sandbox: { hide: [], readOnly: [], privateTerminals: true },
    });
  } catch (error) {
    if (!(error instanceof SpawnError)) throw error;
    const hint = HINTS[error.stage]?.[error.errno];
    return hint ? `${hint}: ${error.message}` : error.message;
  } finally {
    closeSync(devNull);
  }
  const status = waitForChild(pid);
  return status === 0 ? undefined : `${program} in the sandbox ended with wait status ${status}`;
}
