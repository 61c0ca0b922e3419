import type { Child } from "hono/jsx";
import { sectionElement } from "./statusFragments.tsx";
import { Layout, renderDocument } from "./statusLayout.tsx";
import { SECTION_NAMES, type StatusSnapshot } from "./statusSnapshot.ts";
import { verdictTitle } from "./statusVerdict.tsx";

/**
 * The browser view: the verdict, the approval queue pinned under it, then every other section,
 * each polling for itself; without JavaScript a static snapshot.
 */
function StatusPage({ snapshot }: { snapshot: StatusSnapshot }) {
  const now = Date.parse(snapshot.generated_at);
  return (
    <Layout title={verdictTitle(snapshot.verdict, snapshot.host)} host={snapshot.host} generatedAt={now} live>
      {SECTION_NAMES.map((name) => sectionElement(name, snapshot[name], now) as Child)}
    </Layout>
  );
}

export function renderStatusHtml(snapshot: StatusSnapshot): string {
  return renderDocument(<StatusPage snapshot={snapshot} />);
}
