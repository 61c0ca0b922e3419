import { Hono } from "hono";
import { HTMX_PATH, HTMX_SOURCE } from "./htmxAsset.ts";
import { STATUS_JS } from "./statusScript.ts";
import { STATUS_CSS } from "./statusStyles.ts";

const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><circle cx="8" cy="8" r="7" fill="#137333"/><path d="M4.5 8.5l2.2 2.2 4.8-5" stroke="#fff" stroke-width="1.8" fill="none"/></svg>`;

function contentHash(text: string): string {
  return Bun.hash(text).toString(16).padStart(16, "0").slice(0, 12);
}

interface Asset {
  path: string;
  body: string;
  type: string;
}

/** Paths carry a version or content hash, so browsers may cache them for a year. */
export const STATUS_ASSETS = {
  htmx: { path: HTMX_PATH, body: HTMX_SOURCE, type: "text/javascript; charset=utf-8" },
  script: { path: `/assets/status-${contentHash(STATUS_JS)}.js`, body: STATUS_JS, type: "text/javascript; charset=utf-8" },
  stylesheet: { path: `/assets/status-${contentHash(STATUS_CSS)}.css`, body: STATUS_CSS, type: "text/css; charset=utf-8" },
  favicon: { path: `/assets/favicon-${contentHash(FAVICON_SVG)}.svg`, body: FAVICON_SVG, type: "image/svg+xml" },
} satisfies Record<string, Asset>;

/** Assets the login page needs before the browser holds the token (for bearerAuth's exempt list). */
export const PUBLIC_ASSET_PATHS: readonly string[] = [STATUS_ASSETS.stylesheet.path, STATUS_ASSETS.favicon.path];

export function statusAssetRoutes(): Hono {
  const app = new Hono();
  for (const asset of Object.values(STATUS_ASSETS)) {
    app.get(asset.path, (c) =>
      c.body(asset.body, 200, {
        "Content-Type": asset.type,
        "Cache-Control": "public, max-age=31536000, immutable",
        "X-Content-Type-Options": "nosniff",
      }),
    );
  }
  return app;
}
