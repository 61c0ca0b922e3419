import { Hono } from "hono";
import { getCookie } from "hono/cookie";
import type { SessionTranscript } from "../agent/index.ts";
import { AgentdError } from "../core/errors/index.ts";
import { badgeRoutes } from "./badgeRoutes.ts";
import { sameOriginGuard } from "../http/csrfGuard.ts";
import { statusAssetRoutes } from "./statusAssets.ts";
import { renderSection } from "./statusFragments.tsx";
import { renderStatusHtml } from "./statusHtml.tsx";
import { isIncidentFilter, renderIncidentListPage, renderIncidentPage, renderIncidentRow } from "./statusIncidentPages.tsx";
import { renderIncidentListText, renderIncidentText, renderSessionListText } from "./statusListText.ts";
import { incidentTimeline } from "./statusIncidentTimeline.ts";
import { pageWindow, parsePageNumber } from "./statusPagination.ts";
import { isSectionName, type StatusSource } from "./statusSnapshot.ts";
import { renderSessionListPage } from "./statusSessionsPage.tsx";
import { renderStatusText } from "./statusText.ts";
import { decisionRoutes } from "./decisionRoutes.ts";
import { NOT_CONFIGURED } from "./statusSource.ts";
import { renderTranscriptFragment, renderTranscriptPage } from "./statusTranscriptPage.tsx";
import { renderTranscriptText } from "./transcriptText.ts";
import { transcriptEntries } from "./transcriptView.ts";
import { formatOf, parseId, returnPath, sendHtml, sendJson, sendText } from "./statusResponses.ts";
import { actorLabel } from "../watchdog/index.ts";
import { PERSON_COOKIE } from "./loginRoutes.tsx";

export type { StatusSource } from "./statusSnapshot.ts";

const INCIDENTS_PER_PAGE = 50;
const SESSIONS_PER_PAGE = 50;

/** /status and its pages, fragments, incident buttons, badges and the embedded assets. */
export function statusRoutes(source: StatusSource): Hono {
  const app = new Hono();
  app.route("/", statusAssetRoutes());
  app.route("/", badgeRoutes(source));
  app.use("/status/*", sameOriginGuard());
  app.route("/", decisionRoutes(source.decisions));

  // The daemon's address alone, as a person types it, opens the page (for every format: curl -L too).
  app.get("/", (c) => c.redirect("/status", 302));

  app.get("/status", async (c) => {
    const snapshot = await source.snapshot();
    switch (formatOf(c)) {
      case "json":
        return sendJson(c, snapshot);
      case "html":
        return sendHtml(c, renderStatusHtml(snapshot));
      case "text":
        return sendText(c, renderStatusText(snapshot, { color: c.req.query("color") === "1" }));
    }
  });

  app.get("/status/fragments/:section", async (c) => {
    const name = c.req.param("section");
    if (!isSectionName(name)) throw new AgentdError("not_found", `No status section "${name}"`);
    return sendHtml(c, renderSection(name, await source.section(name), Date.now()));
  });

  app.get("/status/incidents", (c) => {
    const filter = c.req.query("state") ?? "all";
    if (!isIncidentFilter(filter))
      throw new AgentdError(
        "invalid_query",
        `Cannot filter incidents by state "${filter}": expected all, open, acknowledged, resolved or unresolved`,
        { param: "state" },
      );
    const page = parsePageNumber(c.req.query("page"));
    const result = source.incidentPage(filter, { limit: INCIDENTS_PER_PAGE, offset: (page - 1) * INCIDENTS_PER_PAGE });
    const window = pageWindow(page, INCIDENTS_PER_PAGE, result.total);
    const now = Date.now();
    switch (formatOf(c)) {
      case "json":
        return sendJson(c, {
          state: filter,
          page,
          pages: window.pages,
          per_page: INCIDENTS_PER_PAGE,
          total: result.total,
          incidents: result.rows,
        });
      case "html":
        return sendHtml(c, renderIncidentListPage({ filter, window, rows: result.rows, now }));
      case "text":
        return sendText(c, renderIncidentListText(filter, window, result.rows, now));
    }
  });

  app.get("/status/incidents/:id", async (c) => {
    const incident = source.incident(parseId(c.req.param("id")));
    const events = source.incidentEvents(incident.id);
    switch (formatOf(c)) {
      case "json":
        return sendJson(c, { ...incident, timeline: incidentTimeline(incident, events) });
      case "html": {
        const component = incident.details.component;
        const checks = typeof component === "string" && component.startsWith("check:") ? await source.section("watchdog") : undefined;
        const check = checks?.rows.find((row) => `check:${row.name}` === component);
        return sendHtml(c, renderIncidentPage(incident, events, Date.now(), check));
      }
      case "text":
        return sendText(c, renderIncidentText(incident, events, Date.now()));
    }
  });

  app.post("/status/incidents/:id/:verb{ack|resolve}", (c) => {
    const id = parseId(c.req.param("id"));
    // `page:<name>` once someone signed in with a name; plain `page` where the page needs no sign-in.
    const by = actorLabel("page", getCookie(c, PERSON_COOKIE));
    const incident = source.setIncidentState(id, c.req.param("verb") === "ack" ? "acknowledged" : "resolved", by);
    if (c.req.header("hx-request") === "true") return sendHtml(c, renderIncidentRow(incident, Date.now()));
    if (formatOf(c) === "json") return sendJson(c, incident);
    return c.redirect(returnPath(c, `/status/incidents/${id}`), 303);
  });

  /** A session's transcript with its approvals still waiting (read from the one queue, so the buttons are the queue's). */
  const transcriptView = async (transcript: SessionTranscript) => {
    const queue = await source.section("approvals");
    return { transcript, pending: queue.rows.filter((row) => row.session_id === transcript.session.id), now: Date.now() };
  };

  app.get("/status/sessions/:id", async (c) => {
    const transcript = source.transcript(c.req.param("id"));
    if (!transcript) throw new AgentdError("not_found", NOT_CONFIGURED.sessions);
    switch (formatOf(c)) {
      case "json":
        return sendJson(c, { ...transcript, entries: transcriptEntries(transcript) });
      case "html":
        return sendHtml(c, renderTranscriptPage(await transcriptView(transcript)));
      case "text":
        return sendText(c, renderTranscriptText(transcript, Date.now()));
    }
  });

  app.get("/status/sessions/:id/fragment", async (c) => {
    const transcript = source.transcript(c.req.param("id"));
    if (!transcript) throw new AgentdError("not_found", NOT_CONFIGURED.sessions);
    return sendHtml(c, renderTranscriptFragment(await transcriptView(transcript)));
  });

  app.get("/status/sessions", (c) => {
    const page = parsePageNumber(c.req.query("page"));
    const result = source.sessionPage({ limit: SESSIONS_PER_PAGE, offset: (page - 1) * SESSIONS_PER_PAGE });
    const window = pageWindow(page, SESSIONS_PER_PAGE, result?.total ?? 0);
    if (formatOf(c) === "json") {
      if (!result) return sendJson(c, { configured: false, page, pages: 1, per_page: SESSIONS_PER_PAGE, total: 0, sessions: [] });
      return sendJson(c, {
        configured: true,
        page,
        pages: window.pages,
        per_page: SESSIONS_PER_PAGE,
        total: result.total,
        sessions: result.rows,
      });
    }
    const view = result && { window, rows: result.rows };
    return formatOf(c) === "html"
      ? sendHtml(c, renderSessionListPage(view, Date.now()))
      : sendText(c, renderSessionListText(view, Date.now()));
  });
  return app;
}
