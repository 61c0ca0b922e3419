export { nativeSpawn } from "./nativeSpawn.ts";
export type { NativeSpawnSpec, SpawnCredentials, SpawnLimit, SpawnSandbox } from "./nativeSpawn.ts";
export { namespaceSandboxAvailable } from "./sandboxProbe.ts";
export { errnoName, SpawnError } from "./spawnError.ts";
