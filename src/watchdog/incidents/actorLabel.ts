import { AgentdError } from "../../core/errors/index.ts";
import type { Decider } from "./actionRequest.ts";

/** An OS or login user name, as the CLI sends it: letters, digits and `._@-`, as useradd and directory services allow. */
const USER_NAME = /^[A-Za-z0-9_][A-Za-z0-9._@-]{0,63}$/;

export const MAX_PERSON_NAME = 64;

/**
 * A name a person typed at the page's sign-in: any printable text (spaces inside, not around), no
 * control or invisible format characters, at most MAX_PERSON_NAME characters. Returns why not, or
 * undefined when it can stand as a name.
 */
export function personNameProblem(name: string): string | undefined {
  if (name.trim() === "") return "a name is needed: who acknowledges and resolves incidents is recorded with it";
  if (name !== name.trim()) return "a name may not start or end with a space";
  if ([...name].length > MAX_PERSON_NAME) return `a name is at most ${MAX_PERSON_NAME} characters`;
  if (/[\p{C}]/u.test(name)) return "a name may hold printable characters only";
  return undefined;
}

/**
 * Who moved an incident, as its details and timeline say it: the way they came and the person
 * (`cli:alice`, `page:Alice Smith`), or only the way when no person is named. A name that could not
 * be one (a user name from the CLI or the API, a typed name from the page) is refused rather than
 * stored, since the page and alerts show it.
 */
export function actorLabel(via: Decider, person: string | undefined): string {
  if (person === undefined || person === "") return via;
  const problem = via === "page" ? personNameProblem(person) : USER_NAME.test(person) ? undefined : "expected a user name";
  if (problem)
    throw new AgentdError(
      "invalid_request",
      via === "page"
        ? `Cannot use ${JSON.stringify(person.slice(0, 80))} as the page's name: ${problem}; sign in again`
        : `Cannot use ${JSON.stringify(person.slice(0, 80))} as user: expected a user name (letters, digits, ".", "_", "@", "-"; at most 64)`,
      { param: via === "page" ? "name" : "user" },
    );
  return `${via}:${person}`;
}
