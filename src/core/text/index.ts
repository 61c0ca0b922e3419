export { hasInvisibleChars, revealInvisibleChars } from "./invisibleChars.ts";
