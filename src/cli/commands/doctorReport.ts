import { errorMessage } from "../../core/errors/index.ts";

export type DoctorStatus = "pass" | "fail" | "skip";

export interface DoctorResult {
  name: string;
  status: DoctorStatus;
  detail: string;
  /** What to do about a failure. */
  hint?: string;
}

export interface DoctorCheck {
  name: string;
  run(): Promise<DoctorResult | DoctorResult[]>;
}

/** One line per result: status, name, what was seen, and for a failure what to do. */
export function formatDoctorReport(results: DoctorResult[]): string {
  const width = Math.max(8, ...results.map((r) => r.name.length));
  const lines = results.map(
    (r) => `${r.status.padEnd(4)}  ${r.name.padEnd(width)}  ${r.detail}${r.status === "fail" && r.hint ? ` (hint: ${r.hint})` : ""}`,
  );
  const count = (status: DoctorStatus) => results.filter((r) => r.status === status).length;
  lines.push(`agentd doctor: ${count("pass")} passed, ${count("fail")} failed, ${count("skip")} skipped`);
  return `${lines.join("\n")}\n`;
}

/** Runs every check; a check that throws becomes a failure of that check, never a crash of the command. */
export async function runDoctorChecks(checks: DoctorCheck[]): Promise<DoctorResult[]> {
  const results: DoctorResult[] = [];
  for (const check of checks) {
    try {
      const outcome = await check.run();
      results.push(...(Array.isArray(outcome) ? outcome : [outcome]));
    } catch (error) {
      results.push({ name: check.name, status: "fail", detail: `the check itself failed: ${errorMessage(error)}` });
    }
  }
  return results;
}
