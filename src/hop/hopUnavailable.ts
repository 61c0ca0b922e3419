import { HopError } from "./hopErrors.ts";
import type { HopState } from "./hopSpec.ts";

/** The error a call through a hop gets while the hop cannot carry it, saying why and whether to try again. */
export function hopUnavailable(name: string, state: HopState, lastError: string | undefined): HopError {
  if (state === "reconnecting") {
    return new HopError(
      "hop_disconnected",
      `Hop ${name} lost its connection and is reconnecting${lastError ? ` (last attempt: ${lastError})` : ""}; try again shortly`,
    );
  }
  if (state === "closed") return new HopError("hop_closed", `Hop ${name} is closed${lastError ? `: ${lastError}` : ""}`);
  return new HopError("hop_disconnected", `Hop ${name} is not connected yet`);
}
