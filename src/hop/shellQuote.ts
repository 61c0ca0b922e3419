/** Single-quotes a word for POSIX sh. */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * A sh expression for a remote path: a leading `~/` becomes "$HOME"/ (expanded remotely), the
 * rest is quoted literally.
 */
export function remotePathExpression(path: string): string {
  if (path === "~") return `"$HOME"`;
  if (path.startsWith("~/")) return `"$HOME"/${shellQuote(path.slice(2))}`;
  return shellQuote(path);
}

/** Resolves `~` against the remote home once it is known. */
export function resolveRemotePath(path: string, home: string): string {
  if (path === "~") return home;
  if (path.startsWith("~/")) return `${home.replace(/\/+$/, "")}/${path.slice(2)}`;
  return path;
}
