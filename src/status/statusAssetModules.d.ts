// Bun's text loader embeds the file into the binary as a string; TypeScript only needs its type.
declare module "htmx.org/dist/htmx.min.js" {
  const source: string;
  export default source;
}
