import { Hono, type Context } from "hono";
import { z } from "zod";
import { approvalDecisions, digestField, type ApprovalDecision, type DecidedBy, type DecisionResult } from "../agent/index.ts";
import { AgentdError } from "../core/errors/index.ts";
import { readValidatedBody } from "../http/requestBody.ts";
import { ACTION_DECISIONS, type ActionDecision, type ActionRequest, type Decider } from "../watchdog/index.ts";
import { actionDecisionFragment, actionErrorFragment } from "./actionRequestFragment.ts";
import { decisionErrorFragment, decisionFragment } from "./approvalFragment.ts";
import { formatOf, parseId, returnPath, sendJson } from "./statusResponses.ts";

/** The services behind the page's decision buttons; one left out is a capability this worker lacks. */
export interface PageDecisions {
  approval?(id: string, decision: ApprovalDecision, decidedBy: DecidedBy, digest?: string): DecisionResult;
  incidentAction?(incidentId: number, decision: ActionDecision, decidedBy: Decider): ActionRequest;
}

// The card's buttons always send the digest shown beside them; a form posted without one (a page
// served before digests) is still taken.
const approvalForm = z.object({
  decision: z.enum(approvalDecisions),
  digest: digestField.optional(),
});
const actionForm = z.object({ decision: z.enum(ACTION_DECISIONS) });

function notAvailable(what: string): AgentdError {
  return new AgentdError("not_found", `${what} are not available in this agentd`);
}

/**
 * Answers a button: htmx gets a fragment to swap in place of the buttons (a refusal too, with 200
 * for "someone decided first", since htmx swaps only 2xx); JSON when asked; a form posted without
 * JavaScript goes back to the page it came from.
 */
async function answer<T>(
  c: Context,
  fallback: string,
  decide: () => Promise<T>,
  fragments: { done(result: T): string; refused(error: AgentdError): string },
): Promise<Response> {
  const fromHtmx = c.req.header("hx-request") === "true";
  try {
    const result = await decide();
    if (fromHtmx) return c.html(fragments.done(result));
    if (formatOf(c) === "json") return sendJson(c, result);
    return c.redirect(returnPath(c, fallback), 303);
  } catch (error) {
    if (fromHtmx && error instanceof AgentdError)
      return c.html(fragments.refused(error), error.status === 409 ? 200 : (error.status as 400));
    throw error;
  }
}

/** POST /status/approvals/:id/decide and /status/incidents/:id/action: the page's buttons, decided by "page". */
export function decisionRoutes(decisions: PageDecisions): Hono {
  const app = new Hono();
  app.post("/status/approvals/:id/decide", (c) => {
    const id = c.req.param("id");
    return answer(
      c,
      "/status",
      async () => {
        const { decision, digest } = await readValidatedBody(c.req.raw, approvalForm, { form: true });
        if (!decisions.approval) throw notAvailable("Approvals");
        return decisions.approval(id, decision, "page", digest);
      },
      { done: decisionFragment, refused: (error) => decisionErrorFragment(id, error.message) },
    );
  });
  app.post("/status/incidents/:id/action", (c) => {
    const id = parseId(c.req.param("id"));
    return answer(
      c,
      `/status/incidents/${id}`,
      async () => {
        const { decision } = await readValidatedBody(c.req.raw, actionForm, { form: true });
        if (!decisions.incidentAction) throw notAvailable("Command approvals");
        return decisions.incidentAction(id, decision, "page");
      },
      { done: actionDecisionFragment, refused: (error) => actionErrorFragment(id, error.code, error.message) },
    );
  });
  return app;
}
