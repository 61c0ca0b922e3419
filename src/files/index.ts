export { createFileRoutes } from "./fileRoutes.ts";
export { createFilesCapability } from "./filesCapability.ts";
export { DEFAULT_READ_BYTES, chooseEncoding, decodeContent, encodeContent, readFileArgs, writeFileArgs } from "./fileSchemas.ts";
export type { ReadFileArgs, WriteFileArgs, ReadFileResult, WriteFileResult } from "./fileSchemas.ts";
export { createLocalFiles } from "./localFiles.ts";
export { sliceLines } from "./textLines.ts";
export type { LineSlice } from "./textLines.ts";
export { readTextLines, writeTextFile } from "./textFileAccess.ts";
export type { FileAccess, TextReadRequest } from "./textFileAccess.ts";
