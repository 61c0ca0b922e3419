import { expect, test } from "bun:test";
import { renderSection } from "../../src/status/statusFragments.tsx";
import type { ApprovalRow, StatusSection } from "../../src/status/statusSnapshot.ts";

const NOW = Date.parse("2025-03-04T05:06:07Z");
const DIGEST = "0123456789abcdef".repeat(4);

function approvals(row: Partial<ApprovalRow>): StatusSection<ApprovalRow> {
  return {
    configured: true,
    rows: [
      {
        id: "ap_1",
        kind: "agent",
        requested_by: "agent session",
        session_id: "s_1",
        tool: "exec_command",
        scope: "sudo",
        summary: "exec_command …",
        requested_at: NOW - 30_000,
        ...row,
      },
    ],
  };
}

test("the card shows the digest's start, and its buttons send all of it", () => {
  const html = renderSection("approvals", approvals({ command: "sudo id", digest: DIGEST }), NOW);
  expect(html).toContain(`data-field="digest">digest <code title="${DIGEST}">0123456789ab</code>`);
  expect(html).toContain(`<input type="hidden" name="digest" value="${DIGEST}"`);
  // Inside the form, so the button's post carries it.
  expect(html.indexOf('name="digest"')).toBeGreaterThan(html.indexOf("data-approval-form"));
});

test("a card without a digest (an approval from before digests) posts the decision alone", () => {
  const html = renderSection("approvals", approvals({ command: "sudo id" }), NOW);
  expect(html).not.toContain('name="digest"');
  expect(html).not.toContain('data-field="digest"');
});

test("a bare escalation's words, each in its own box, invisible and control characters shown", () => {
  const argv = ["sudo", "-u", "post gres", "", "rm\u202E", "a\nb\u001b"];
  const html = renderSection("approvals", approvals({ command: "sudo -u 'post gres' '' …", argv, digest: DIGEST }), NOW);
  const words = [...html.matchAll(/<li><code>(.*?)<\/code><\/li>/g)].map((match) => match[1]);
  expect(words).toEqual(["sudo", "-u", "post gres", "", "rm&lt;U+202E&gt;", "a\\nb&lt;U+001B&gt;"]);
  expect(html).toContain('<ol class="argv">');
  expect(html).toContain("without a shell");
});
