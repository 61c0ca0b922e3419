import type { Child } from "hono/jsx";
import { sectionElement } from "./statusFragments.tsx";
import { Layout, renderDocument } from "./statusLayout.tsx";
import { SECTION_NAMES, type StatusSnapshot } from "./statusSnapshot.ts";

/** The browser view: every section, each polling for itself; without JavaScript a static snapshot. */
function StatusPage({ snapshot }: { snapshot: StatusSnapshot }) {
  const now = Date.parse(snapshot.generated_at);
  return (
    <Layout title={`agentd — ${snapshot.health.status}`} generatedAt={now} live>
      {SECTION_NAMES.map((name) => sectionElement(name, snapshot[name], now) as Child)}
    </Layout>
  );
}

export function renderStatusHtml(snapshot: StatusSnapshot): string {
  return renderDocument(<StatusPage snapshot={snapshot} />);
}
