export { Redactor, redactHeaders, redactSecrets, redactText } from "./secretRedaction.ts";
