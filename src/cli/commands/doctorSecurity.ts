import { decideHiding, privilegeGateProblem } from "../../pty/index.ts";
import type { DoctorCheck } from "./doctorReport.ts";

/** Whether the kernel keeps unapproved commands from raising privileges (no_new_privs, agentd not root). */
export function privilegeGateCheck(): DoctorCheck {
  return {
    name: "privilege gate",
    async run() {
      const problem = privilegeGateProblem();
      if (problem)
        return {
          name: "privilege gate",
          status: "fail",
          detail: problem,
          hint: "start agentd as its own user (README: Security model, systemd)",
        };
      return {
        name: "privilege gate",
        status: "pass",
        detail: "commands start with no_new_privs; only sudo-approved ones may raise privileges",
      };
    },
  };
}

/** Whether commands the agent runs are kept out of agentd's data dir and config file (Landlock). */
export function hidingCheck(paths: readonly string[]): DoctorCheck {
  return {
    name: "own files hidden",
    async run() {
      const decision = decideHiding(paths);
      if (decision.problem)
        return {
          name: "own files hidden",
          status: "fail",
          detail: `commands can reach agentd's own files (the store with its approvals and grants, the token): ${decision.problem}`,
          hint: "keep the data dir under a directory agentd's user cannot write, as systemd's StateDirectory does (/var/lib/agentd)",
        };
      return { name: "own files hidden", status: "pass", detail: `commands cannot open ${decision.hidden.join(", ")} (Landlock)` };
    },
  };
}
