/** What a key pressed at the Ctrl-C question means; its keys share none with the approval question's o/s/d. */
export type InterruptChoice = "cancel" | "leave" | "watch";

export const INTERRUPT_QUESTION = "Ctrl-C: [c]ancel the turn, [l]eave it running and detach, [w]atch on ";

/** c cancels, l leaves (detaches), w or Enter watches on; any other key (d among them) is no answer. */
export function parseInterruptAnswer(key: string): InterruptChoice | undefined {
  const k = key.toLowerCase();
  if (k === "c") return "cancel";
  if (k === "l") return "leave";
  if (k === "w" || k === "\r" || k === "\n") return "watch";
  return undefined;
}
