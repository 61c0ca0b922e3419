import type { Parser } from "web-tree-sitter";
import coreWasm from "web-tree-sitter/tree-sitter.wasm" with { type: "file" };
import bashWasm from "tree-sitter-bash/tree-sitter-bash.wasm" with { type: "file" };

let loading: Promise<Parser> | undefined;

/**
 * tree-sitter's bash grammar, loaded once from the .wasm files embedded in the binary. A real
 * parser, so quoting, substitutions, heredocs and pipelines are seen as bash sees them. Loaded at
 * the first command judged: an idle worker does not hold web-tree-sitter.
 */
export function bashParser(): Promise<Parser> {
  loading ??= (async () => {
    const { Language, Parser } = await import("web-tree-sitter");
    await Parser.init({ locateFile: () => coreWasm });
    const language = await Language.load(await Bun.file(bashWasm).bytes());
    const parser = new Parser();
    parser.setLanguage(language);
    return parser;
  })();
  return loading;
}
