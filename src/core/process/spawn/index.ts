export { nativeSpawn } from "./nativeSpawn.ts";
export type { NativeSpawnSpec, SpawnCredentials, SpawnLimit } from "./nativeSpawn.ts";
export { errnoName, SpawnError } from "./spawnError.ts";
