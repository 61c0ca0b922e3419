/** A configured provider as far as which models it serves (the config's `providers[]`). */
export interface ServedModels {
  name: string;
  /** Names or globs (`*` any run, `?` one character); `*` serves any model. */
  models: readonly string[];
  aliases: Readonly<Record<string, string>>;
}

/** The proxy's glob rule (src/proxy/upstream/modelMatcher.ts), kept here so the supervisor does not load the proxy. */
function globMatches(pattern: string, model: string): boolean {
  if (pattern === "*") return true;
  if (!/[*?]/.test(pattern)) return pattern === model;
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${source}$`).test(model);
}

function serves(provider: ServedModels, model: string): boolean {
  return Object.keys(provider.aliases).some((alias) => globMatches(alias, model)) || provider.models.some((m) => globMatches(m, model));
}

/**
 * The other providers a request for `model` could fail over to once `provider` is switched away
 * from; with the model unknown, every other provider counts. Pure.
 */
export function failoverTargets(providers: readonly ServedModels[], provider: string, model: string | undefined): string[] {
  return providers.filter((p) => p.name !== provider && (model === undefined || serves(p, model))).map((p) => p.name);
}
