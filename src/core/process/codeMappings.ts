/** A mapping of the running executable that holds only clean pages read from the file. */
export interface CleanCodeMapping {
  start: bigint;
  end: bigint;
  /** Resident kB of the mapping when smaps was read. */
  rssKb: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S{4}) [0-9a-f]+ \S+ \d+\s*(.*)$/;

interface Mapping {
  start: bigint;
  end: bigint;
  perms: string;
  path: string;
  fields: Map<string, number>;
}

function parseSmaps(smaps: string): Mapping[] {
  const mappings: Mapping[] = [];
  let current: Mapping | undefined;
  for (const line of smaps.split("\n")) {
    const header = HEADER.exec(line);
    if (header) {
      current = { start: BigInt(`0x${header[1]}`), end: BigInt(`0x${header[2]}`), perms: header[3]!, path: header[4]!, fields: new Map() };
      mappings.push(current);
      continue;
    }
    const field = /^(\w+):\s+(\d+) kB$/.exec(line);
    if (field && current) current.fields.set(field[1]!, Number(field[2]));
  }
  return mappings;
}

/**
 * The mappings of `executable` in `smaps` (the text of /proc/<pid>/smaps) whose resident pages can
 * be dropped and mapped back from the page cache unchanged: private, not writable, and no page of
 * them written by the process, something resident. A write to a private mapping leaves an anonymous
 * copy (relocated read-only data, bun's WTF::Config and JSC's opcode table made read-only after
 * start, a debugger's breakpoint, a uprobe): resident it counts in Anonymous, swapped out in Swap,
 * and MADV_DONTNEED would lose it either way. Dirty is no test: a binary just copied has dirty
 * page-cache pages until they are written back, and they are still its bytes (a running executable
 * cannot be written to: ETXTBSY).
 */
export function cleanCodeMappings(smaps: string, executable: string): CleanCodeMapping[] {
  return parseSmaps(smaps)
    .filter(
      (mapping) =>
        mapping.path === executable &&
        mapping.perms[1] === "-" &&
        mapping.perms[3] === "p" &&
        mapping.fields.has("Rss") &&
        mapping.fields.get("Anonymous") === 0 &&
        mapping.fields.get("Swap") === 0 &&
        (mapping.fields.get("Rss") ?? 0) > 0,
    )
    .map((mapping) => ({ start: mapping.start, end: mapping.end, rssKb: mapping.fields.get("Rss")! }));
}
