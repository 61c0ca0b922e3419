import { AgentdError } from "../../core/errors/index.ts";
import {
  localIdentityHost,
  resolveCommandIdentity,
  resolveWorkerAccount,
  type OwnPaths,
  type RunAs,
} from "../../core/process/identity/index.ts";
import { detectCgroupLayout } from "../../core/process/cgroups/index.ts";
import type { DoctorCheck } from "./doctorReport.ts";

const NAME = "privilege gate";

/** Whether the kernel keeps commands from agentd: a command user of their own, and agentd's files out of its reach. */
export function privilegeGateCheck(runAs: RunAs, own: OwnPaths, worker: { user: string; port: number }): DoctorCheck {
  return {
    name: NAME,
    async run() {
      try {
        const identity = resolveCommandIdentity(runAs, own, localIdentityHost(), false);
        if (identity.mode === "unguarded" || identity.problems.length > 0)
          return {
            name: NAME,
            status: "fail",
            detail: `unguarded: ${identity.problems.join("; ")}`,
            hint: "start agentd as root, with the data dir and config where the command user cannot reach them (README: Security model)",
          };
        if (identity.mode === "namespaces")
          return { name: NAME, status: "pass", detail: `namespaces; decisions and direct calls need the token; ${identity.limits}` };
        const account =
          worker.port > 0 && worker.port < 1024
            ? { problem: `port ${worker.port} is below 1024: only root may bind it` }
            : resolveWorkerAccount(worker.user, identity, own, localIdentityHost(), false);
        const split =
          "problem" in account
            ? `the worker stays root (${account.problem})`
            : `the worker runs as ${account.user} (uid ${account.uid}) and the supervisor stays root as its monitor`;
        return {
          name: NAME,
          status: "pass",
          detail: `commands run as ${identity.user} (uid ${identity.credentials?.uid}), with no_new_privs; decisions need the token; ${split}`,
        };
      } catch (error) {
        if (!(error instanceof AgentdError)) throw error;
        if (runAs.user === "agentd-cmd" && error.message.includes("there is no user"))
          return {
            name: NAME,
            status: "skip",
            detail: "the command user agentd-cmd does not exist yet: `agentd serve` creates it at start",
          };
        return { name: NAME, status: "fail", detail: error.message, hint: "set pty.run_as to an existing unprivileged user" };
      }
    },
  };
}

/** Whether each command session can get a cgroup of its own (limits, and a kill that reaches detached processes). */
export function cgroupCheck(): DoctorCheck {
  return {
    name: "cgroups",
    async run() {
      const layout = detectCgroupLayout();
      if (layout.kind === "none")
        return {
          name: "cgroups",
          status: "fail",
          detail: `commands get rlimits only: ${layout.why}`,
          hint: "start agentd as root, or with Delegate=yes under systemd",
        };
      return { name: "cgroups", status: "pass", detail: `each command session gets its own cgroup (${layout.kind})` };
    },
  };
}
