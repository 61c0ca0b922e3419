export { hasInvisibleChars, oneLine, revealInvisibleChars } from "./invisibleChars.ts";
