export { mapEntry, newMap } from "./mapEntry.ts";
