export { hasInvisibleChars, oneLine, revealInvisibleChars } from "./invisibleChars.ts";
export { stripAnsi, terminalText } from "./terminalText.ts";
