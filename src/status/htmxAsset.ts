import htmxSource from "htmx.org/dist/htmx.min.js" with { type: "text" };
import htmxPackage from "htmx.org/package.json" with { type: "json" };

/** htmx, embedded into the binary by Bun's text loader: the page never loads anything from a CDN. */
const HTMX_VERSION: string = htmxPackage.version;
export const HTMX_PATH = `/assets/htmx-${HTMX_VERSION}.min.js`;
export const HTMX_SOURCE: string = htmxSource;
