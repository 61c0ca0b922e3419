import { SessionTable } from "./statusTables.tsx";
import { Pager } from "./statusIncidentPages.tsx";
import { Layout, pageTitle, renderDocument } from "./statusLayout.tsx";
import type { PageWindow } from "./statusPagination.ts";
import { NOT_CONFIGURED } from "./statusSource.ts";
import type { SessionRow } from "./statusSnapshot.ts";

function SessionListPage({ page, now }: { page: { window: PageWindow; rows: SessionRow[] } | undefined; now: number }) {
  return (
    <Layout title={pageTitle("sessions")} generatedAt={now} live single>
      <section class="card">
        <h2>Agent sessions</h2>
        {!page ? (
          <p class="note">Not configured: {NOT_CONFIGURED.sessions}</p>
        ) : page.rows.length === 0 ? (
          <p class="empty">
            {page.window.total === 0 ? "No agent sessions yet." : `Page ${page.window.page} is past the last page (${page.window.pages}).`}
          </p>
        ) : (
          <div class="table-wrap">
            <SessionTable rows={page.rows} now={now} />
          </div>
        )}
        {page && <Pager base="/status/sessions" window={page.window} />}
      </section>
    </Layout>
  );
}

export function renderSessionListPage(page: { window: PageWindow; rows: SessionRow[] } | undefined, now: number): string {
  return renderDocument(<SessionListPage page={page} now={now} />);
}
