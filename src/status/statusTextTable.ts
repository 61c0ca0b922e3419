import { oneLine, textWidth, truncate } from "./statusFormat.ts";

export interface TextColumn {
  header: string;
  /** The column that gives up width first when the table is too wide (free text: titles, commands). */
  flex?: boolean;
  align?: "left" | "right";
}

/** A cell: its text, and an optional painter applied after padding (ANSI colour must not count as width). */
export type TextCell = string | { text: string; paint?: (padded: string) => string };

const GAP = "  ";
/** No fixed column grows past this, so one long value cannot push the rest off the line. */
const MAX_FIXED = 32;

function cellText(cell: TextCell): string {
  return oneLine(typeof cell === "string" ? cell : cell.text);
}

/**
 * Lays rows out as aligned columns within `width` characters (indent included). The flex column
 * takes what is left; every other column is capped, and anything longer ends in "…".
 */
export function renderTextTable(columns: TextColumn[], rows: TextCell[][], width: number, indent = 2): string[] {
  const texts = rows.map((row) => columns.map((_, i) => cellText(row[i] ?? "")));
  const widths = columns.map((column, i) => Math.max(textWidth(column.header), ...texts.map((row) => textWidth(row[i]!))));
  for (let i = 0; i < columns.length; i++) if (!columns[i]!.flex) widths[i] = Math.min(widths[i]!, MAX_FIXED);
  const flex = columns.findIndex((column) => column.flex);
  const total = () => indent + widths.reduce((sum, w) => sum + w, 0) + GAP.length * (columns.length - 1);
  if (flex >= 0 && total() > width) widths[flex] = Math.max(textWidth(columns[flex]!.header), widths[flex]! - (total() - width));
  const layout = (cells: TextCell[], values: string[]) =>
    " ".repeat(indent) +
    columns
      .map((column, i) => {
        const value = truncate(values[i]!, widths[i]!);
        const padding = " ".repeat(widths[i]! - textWidth(value));
        const padded = column.align === "right" ? padding + value : i === columns.length - 1 ? value : value + padding;
        const cell = cells[i];
        return typeof cell === "object" && cell.paint ? cell.paint(padded) : padded;
      })
      .join(GAP)
      .trimEnd();
  return [
    layout(
      columns.map((c) => c.header),
      columns.map((c) => c.header),
    ),
    ...rows.map((row, r) => layout(row, texts[r]!)),
  ];
}
