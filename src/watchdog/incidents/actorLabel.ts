import { AgentdError } from "../../core/errors/index.ts";
import type { Decider } from "./actionRequest.ts";

/** An OS or login user name: letters, digits and `._@-`, as useradd and directory services allow. */
const USER_NAME = /^[A-Za-z0-9_][A-Za-z0-9._@-]{0,63}$/;

/**
 * Who moved an incident, as its details and timeline say it: the person and the way they came
 * (`alice (cli)`), or only the way when no person is named. A name that could not be a user name
 * is refused rather than stored, since the page and alerts show it.
 */
export function actorLabel(via: Decider, user: string | undefined): string {
  if (user === undefined || user === "") return via;
  if (!USER_NAME.test(user))
    throw new AgentdError(
      "invalid_request",
      `Cannot use ${JSON.stringify(user.slice(0, 80))} as user: expected a user name (letters, digits, ".", "_", "@", "-"; at most 64)`,
      {
        param: "user",
      },
    );
  return `${user} (${via})`;
}
