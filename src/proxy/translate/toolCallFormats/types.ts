/** The shapes every text tool-call format shares; each family's file describes one format with them. */

/** A call as a format's parser read it: the name as written, the arguments as a JSON object's text. */
export interface ParsedCall {
  name: string;
  arguments: string;
}

/** Declared tools by name: each one's JSON schema for its arguments (`{}` when none was given). */
export type ToolSchemas = ReadonlyMap<string, Record<string, unknown>>;

export interface BlockParse {
  calls: ParsedCall[];
  /** Text the format allows after its calls (Mistral's trailing prose), released as text. */
  after?: string;
}

/**
 * A block that starts at a marker and ends at one of its closers (or at the end of the answer
 * when it has none). `parse` gets what lies between; undefined means "not a call": the block
 * then stays text exactly as written.
 */
export interface BlockFormat {
  family: string;
  open: string;
  close: readonly string[];
  parse(content: string, tools: ToolSchemas): BlockParse | undefined;
  /**
   * For a marker prose also uses (a code fence): true once the content so far cannot be this
   * format, so the block streams on as text instead of being held to its end.
   */
  rejects?(content: string): boolean;
  /**
   * For a marker that also opens what is no call (a code fence, harmony's analysis channel): whether
   * content this format did not parse was still meant as one. Absent: every block at the marker was.
   */
  meantAsCall?(content: string): boolean;
}

/** A format with no marker, recognised only when it is the whole answer (Llama 3 JSON, pythonic lists). */
export interface WholeFormat {
  family: string;
  /** Whether an answer starting with this (trimmed) character may be this format. */
  startsWith: readonly string[];
  parse(answer: string, tools: ToolSchemas): ParsedCall[] | undefined;
}

export interface FormatSet {
  blocks: readonly BlockFormat[];
  whole: readonly WholeFormat[];
}
