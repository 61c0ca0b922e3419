/** Set in the worker's environment when its supervisor is its monitor (started as root, split). */
export const MONITOR_ENV = "AGENTD_MONITOR";

/** Set for a worker that stays root although agentd started as root: why it could not run as the service user. */
export const ROOT_WORKER_ENV = "AGENTD_ROOT_WORKER_REASON";
