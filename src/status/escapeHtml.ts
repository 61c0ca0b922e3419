/** Text made safe for element content and quoted attribute values of HTML fragments built as strings, and of the SVG badges (the entities are XML's too). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]!);
}
