export { acquireInstanceLock, readLockHolder } from "./instanceLock.ts";
export type { InstanceLock, LockAttempt, LockHolder } from "./instanceLock.ts";
export { LockError } from "./libcFlock.ts";
