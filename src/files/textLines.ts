export interface LineSlice {
  total_lines: number;
  offset: number;
  lines_returned: number;
  more: boolean;
  content: string;
}

/** Lines `offset` (1-based) to `offset + limit - 1` of a text; a final newline does not count as a line. */
export function sliceLines(text: string, offset: number, limit: number): LineSlice {
  const lines = text.split("\n");
  if (lines.length > 1 && lines.at(-1) === "") lines.pop();
  const from = offset - 1;
  const slice = lines.slice(from, from + limit);
  return {
    total_lines: lines.length,
    offset,
    lines_returned: slice.length,
    more: from + slice.length < lines.length,
    content: slice.join("\n"),
  };
}
