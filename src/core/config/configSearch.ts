/**
 * Set in a supervisor (and so its children) that found no config file at start: a file that shows
 * up later in the searched places (the working directory, ~/.config/agentd) may have been written
 * by a command the agent ran, and is never read.
 */
export const NO_CONFIG_SEARCH_ENV = "AGENTD_NO_CONFIG_SEARCH";
