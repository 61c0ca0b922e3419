import { Hono } from "hono";
import { createElement } from "hono/jsx";
import { StatusPage } from "./statusHtml.tsx";
import type { StatusSource } from "./statusSnapshot.ts";
import { renderStatusText } from "./statusText.ts";

export type { StatusSource } from "./statusSnapshot.ts";

export type StatusFormat = "html" | "text" | "json";

/** JSON when asked by ?format= or Accept; HTML for browsers; plain text for curl's `*\/*`. */
export function negotiateStatusFormat(accept: string | undefined, format: string | undefined): StatusFormat {
  if (format === "json" || format === "text" || format === "html") return format;
  const value = (accept ?? "").toLowerCase();
  if (value.includes("application/json")) return "json";
  if (value.includes("text/html")) return "html";
  return "text";
}

export function statusRoutes(source: StatusSource): Hono {
  const app = new Hono();
  app.get("/status", async (c) => {
    const snapshot = await source();
    c.header("Cache-Control", "no-store");
    c.header("Vary", "Accept");
    switch (negotiateStatusFormat(c.req.header("accept"), c.req.query("format"))) {
      case "json":
        return c.json(snapshot);
      case "html":
        return c.html("<!doctype html>" + createElement(StatusPage, { snapshot }).toString());
      case "text":
        return c.text(renderStatusText(snapshot));
    }
  });
  return app;
}
