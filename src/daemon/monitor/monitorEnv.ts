/** Set in the worker's environment when its supervisor is its monitor (started as root, split). */
export const MONITOR_ENV = "AGENTD_MONITOR";
