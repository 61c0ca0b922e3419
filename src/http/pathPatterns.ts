/**
 * Whether a path matches any of `patterns`, as one combined expression: the guard tests every POST
 * (the proxy's too) against its lists, and one test costs less than one per pattern. The patterns
 * must share their flags and use no backreference (which would count groups across the
 * alternatives): a list that does not is refused when the matcher is made.
 */
export function matchesAnyPattern(patterns: readonly RegExp[]): (path: string) => boolean {
  if (patterns.length === 0) return () => false;
  const flags = patterns[0]!.flags;
  const odd = patterns.find((p) => p.flags !== flags || /[gy]/.test(p.flags) || /\\\d/.test(p.source));
  if (odd)
    throw new TypeError(`Cannot combine ${odd} with ${patterns[0]}: the patterns must share their flags, without g, y or backreferences`);
  const combined = new RegExp(patterns.map((p) => `(?:${p.source})`).join("|"), flags);
  return (path) => combined.test(path);
}
