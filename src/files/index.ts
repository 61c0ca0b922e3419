export { createFileRoutes } from "./fileRoutes.ts";
export { readFileArgs, writeFileArgs } from "./fileSchemas.ts";
export type { ReadFileArgs, WriteFileArgs, ReadFileResult, WriteFileResult } from "./fileSchemas.ts";
export { readLocalFile, writeLocalFile } from "./localFiles.ts";
export { sliceLines } from "./textLines.ts";
export type { LineSlice } from "./textLines.ts";
export { readTextLines, writeTextFile } from "./textFileAccess.ts";
export type { FileAccess, TextReadRequest } from "./textFileAccess.ts";
export { localFileAccess } from "./localFiles.ts";
