/** The hidden subcommand of the agentd binary that starts every command not approved in the sudo scope. */
export const CONFINE_VERB = "__confine";
/** Ends the helper's options: Bun drops a plain "--" from a script's argv, so the marker is a word of its own. */
export const EXEC_MARKER = "--exec";
