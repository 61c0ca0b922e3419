export { REDACTED, Redactor, redactHeaders, redactSecrets, redactText } from "./secretRedaction.ts";
