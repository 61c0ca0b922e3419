import type { HealthStatus } from "../core/health/index.ts";
import type { SectionName } from "./statusSnapshot.ts";

/** Section headings, shared by the HTML and text views so both read the same. */
export const SECTION_TITLES: Record<SectionName, string> = {
  verdict: "Verdict",
  silences: "Silences",
  // agentd's own /health (store, memory, gate): the host's verdict is the banner's, not this card's.
  health: "agentd itself",
  worker: "Worker",
  providers: "Providers",
  watchdog: "Watchdog checks",
  incidents: "Incidents",
  sessions: "Agent sessions",
  approvals: "Pending approvals",
  pty: "PTY sessions",
  hops: "Hops",
};

/** What a configured section with no rows says: each tells the operator what "empty" means there. */
export const EMPTY_TEXT: Record<SectionName, string> = {
  verdict: "",
  silences: "No silences in force.",
  health: "No checks reported.",
  worker: "",
  providers: 'No provider is configured: add one under "providers" in agentd.jsonc, or set OPENAI_API_KEY.',
  watchdog: "No checks are configured for the watchdog.",
  incidents: "No open incidents.",
  sessions: "No agent sessions yet.",
  approvals: "Nothing is waiting for approval.",
  pty: "No PTY sessions.",
  hops: "No hops connected.",
};

/** Colour class of a state word from any section (health statuses, breaker, session and hop states). */
export function stateTone(state: string): HealthStatus | "neutral" {
  if (["pass", "ok", "closed", "running", "connected", "acknowledged", "resolved"].includes(state)) return "pass";
  if (["warn", "degraded", "half_open", "awaiting_approval", "connecting"].includes(state)) return "warn";
  if (["fail", "down", "open", "failed", "auth_failed", "disconnected"].includes(state)) return "fail";
  return "neutral";
}
