export { DEFAULT_COMMAND_USER, localIdentityHost, ownPathProblems, resolveCommandIdentity } from "./commandIdentity.ts";
export type { CommandIdentity, GateMode, IdentityHost, OwnPaths, RunAs } from "./commandIdentity.ts";
export { canRead, canWrite } from "./pathAccess.ts";
export { groupsOf, parseGroups, parsePasswd } from "./accountFiles.ts";
export type { Account, Group } from "./accountFiles.ts";
export { DEFAULT_WORKER_USER, resolveWorkerAccount } from "./workerAccount.ts";
export type { WorkerAccount } from "./workerAccount.ts";
