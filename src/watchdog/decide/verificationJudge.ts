/**
 * What shows that an action fixed an incident: the check that failed passing again, agentd's own
 * probes for its worker and providers, or nothing at all. Silence never counts: a log line that did
 * not come back proves nothing about the service that wrote it.
 */
export type VerificationSource = { kind: "check"; check: string } | { kind: "probe" } | { kind: "none"; why: string };

export type VerificationVerdict = "success" | "failed" | "unverified";

/** What the watchdog saw once the action ran. */
export interface VerificationEvidence {
  /** For a check source: the check ran after the action started and passes (debounced). */
  checkPassedSince: boolean;
  /** For a probe source: the worker's probes pass. */
  healthy: boolean;
  /** A signal that led to the action came back after it. */
  recurred: boolean;
  /** The verification window is over. */
  due: boolean;
}

export interface Judgement {
  verdict: VerificationVerdict;
  /** In words, for the incident's timeline: what the verdict rests on. */
  by: string;
}

/** A configured signature as far as verification cares. */
export interface SignatureVerification {
  id: string;
  verify_check?: string;
}

/**
 * Picks the source for an incident: a check incident is verified by its check; an incident raised by
 * configured (watched service) signatures by the check the first of them names in `verify_check`;
 * agentd's own signals by its probes.
 */
export function verificationSource(
  fingerprint: string,
  triggerIds: readonly string[],
  configured: ReadonlyMap<string, SignatureVerification>,
): VerificationSource {
  if (fingerprint.startsWith("check:")) return { kind: "check", check: fingerprint.slice("check:".length) };
  const signatures = triggerIds.map((id) => configured.get(id)).filter((s): s is SignatureVerification => s !== undefined);
  if (signatures.length === 0) return { kind: "probe" };
  const named = signatures.find((s) => s.verify_check);
  if (named) return { kind: "check", check: named.verify_check! };
  return {
    kind: "none",
    why: `signature ${signatures.map((s) => s.id).join(", ")} names no verify_check, so nothing can show the action worked`,
  };
}

/** The verdict once the evidence is in, or undefined while it is still to come. */
export function judge(source: VerificationSource, evidence: VerificationEvidence): Judgement | undefined {
  switch (source.kind) {
    case "none":
      return { verdict: "unverified", by: source.why };
    case "check":
      if (evidence.checkPassedSince) return { verdict: "success", by: `check ${source.check} passed again after the action` };
      if (!evidence.due) return undefined;
      return { verdict: "failed", by: `check ${source.check} did not pass again within the verification window` };
    case "probe":
      if (evidence.recurred) return { verdict: "failed", by: "the signals that led to the action came back" };
      if (!evidence.due) return undefined;
      return evidence.healthy
        ? { verdict: "success", by: "agentd's probes pass and the signals stayed away over the verification window" }
        : { verdict: "failed", by: "agentd's probes still fail" };
  }
}
