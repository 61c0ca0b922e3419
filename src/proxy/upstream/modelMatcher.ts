/** Compiles a model name or glob (`*` any run, `?` one character) into a matcher. */
export function compileGlob(pattern: string): (model: string) => boolean {
  if (pattern === "*") return () => true;
  if (!/[*?]/.test(pattern)) return (model) => model === pattern;
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  const regex = new RegExp(`^${source}$`);
  return (model) => regex.test(model);
}

export function isGlob(pattern: string): boolean {
  return /[*?]/.test(pattern);
}

export interface ModelMatcher {
  /** The upstream model name to send for `model`, or undefined when the provider does not serve it. */
  resolve(model: string): string | undefined;
}

export function createModelMatcher(models: readonly string[], aliases: Readonly<Record<string, string>>): ModelMatcher {
  const matchers = models.map(compileGlob);
  // An alias may be a glob ("claude-*": "gpt-5"), so a client's dated model names need no list; exact names win.
  const globAliases = Object.entries(aliases)
    .filter(([name]) => isGlob(name))
    .map(([name, target]) => ({ match: compileGlob(name), target }));
  return {
    // Loops, not find/some: it runs for every provider on every proxied request.
    resolve(model) {
      if (Object.hasOwn(aliases, model)) return aliases[model];
      for (const alias of globAliases) if (alias.match(model)) return alias.target;
      for (const match of matchers) if (match(model)) return model;
      return undefined;
    },
  };
}
