// Bun's file loader embeds a .wasm into the compiled binary and yields a path to read it from.
declare module "web-tree-sitter/tree-sitter.wasm" {
  const path: string;
  export default path;
}
declare module "tree-sitter-bash/tree-sitter-bash.wasm" {
  const path: string;
  export default path;
}
