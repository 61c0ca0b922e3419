// Bun's text loader embeds the C file into the binary as a string; TypeScript only needs its type.
declare module "*.c" {
  const source: string;
  export default source;
}
