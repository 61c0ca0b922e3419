import { hostname } from "node:os";
import type { Child } from "hono/jsx";
import { STATUS_ASSETS } from "./statusAssets.ts";
import { formatTime } from "./statusFormat.ts";

/** Same-origin only; no inline script or style anywhere on the page, so nothing needs 'unsafe-inline'. */
export const STATUS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

// htmx's defaults that would need a looser CSP (inline indicator styles, eval for trigger filters) are off.
const HTMX_CONFIG = JSON.stringify({
  includeIndicatorStyles: false,
  allowEval: false,
  allowScriptTags: false,
  historyCacheSize: 0,
  refreshOnHistoryMiss: true,
});

/** A tab's title: what the page is, then the host, since a fleet of tabs must tell their hosts apart. */
export function pageTitle(what: string, host: string = hostname()): string {
  return `${what} · ${host} · agentd`;
}

export interface LayoutProps {
  title: string;
  /** The host the page is about (the snapshot's when there is one). */
  host?: string;
  /** Epoch ms of the data shown: printed so a page saved or seen without JavaScript says how old it is. */
  generatedAt?: number;
  /** Pages that poll get htmx, the page script and the connection banner; the login page gets none. */
  live?: boolean;
  single?: boolean;
  children?: Child;
}

export function Layout({ title, host = hostname(), generatedAt, live = false, single = false, children }: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        {live && <meta name="htmx-config" content={HTMX_CONFIG} />}
        <title>{title}</title>
        <link rel="icon" href={STATUS_ASSETS.favicon.path} type="image/svg+xml" />
        <link rel="stylesheet" href={STATUS_ASSETS.stylesheet.path} />
        {live && <script src={STATUS_ASSETS.htmx.path} defer></script>}
        {live && <script src={STATUS_ASSETS.script.path} defer></script>}
      </head>
      <body data-host={host}>
        <header class="top">
          <h1>
            agentd{" "}
            <span class="host" data-field="host">
              {host}
            </span>
          </h1>
          <nav>
            <a href="/status">Status</a>
            <a href="/status/incidents">Incidents</a>
            <a href="/status/sessions">Sessions</a>
          </nav>
          {generatedAt !== undefined && <span class="generated">as of {formatTime(generatedAt)}</span>}
        </header>
        {live && (
          <p id="connection-lost" class="banner" role="alert" hidden>
            Connection lost: agentd is not answering. Below, greyed, is the last data it gave (see the time above); retrying every few
            seconds.
          </p>
        )}
        <main class={single ? "single" : undefined}>{children}</main>
      </body>
    </html>
  );
}

/** A full HTML document as a string. */
export function renderDocument(element: unknown): string {
  return `<!doctype html>${String(element)}`;
}
