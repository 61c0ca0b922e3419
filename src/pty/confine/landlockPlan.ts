import { dirname, join, resolve, sep } from "node:path";

/** What a Landlock rule grants beneath a path: everything, or only listing (an ancestor of a hidden path). */
export type RuleAccess = "all" | "list";

export interface LandlockRule {
  path: string;
  access: RuleAccess;
  /** A directory may carry directory rights; any other file only file rights. */
  directory: boolean;
}

export interface HidingPlan {
  rules: LandlockRule[];
  /** The paths the plan hides. */
  hidden: string[];
  /** Paths that cannot be hidden without breaking ordinary commands, and why. */
  exposed: { path: string; why: string }[];
}

export interface PlanFs {
  /** The entries of a directory with whether each is a directory; undefined when it cannot be listed. */
  list(dir: string): { name: string; directory: boolean; symlink: boolean }[] | undefined;
  /** Whether agentd's user may create files in the directory. */
  writable(dir: string): boolean;
}

/**
 * Landlock only allows: a rule grants access beneath a path, nothing takes it away. To hide a
 * path, every ancestor gets a rule to list it, and every other entry of every ancestor a rule for
 * everything. New entries later made in an ancestor would be out of reach, and so would creating
 * files in it — harmless only where agentd's user cannot write anyway (/, /var, /var/lib for a
 * systemd StateDirectory). A path with a writable ancestor (a home, /tmp, the working directory) is
 * left exposed and reported. Symbolic links get no rule: what they point to is judged at its own
 * place. Pure.
 */
export function planHiding(paths: readonly string[], fs: PlanFs): HidingPlan {
  const exposed: { path: string; why: string }[] = [];
  const wanted = [...new Set(paths.map((p) => resolve(p)))].filter((p) => p !== sep);
  // A path under another hidden one is hidden with it.
  const outermost = wanted.filter((p) => !wanted.some((other) => other !== p && p.startsWith(other + sep)));
  const hidden: string[] = [];
  for (const path of outermost) {
    const writable = ancestorsOf(path).find((dir) => fs.writable(dir));
    if (writable)
      exposed.push({
        path,
        why: `${writable} is writable by agentd's user, so hiding ${path} would keep commands from making files there`,
      });
    else hidden.push(path);
  }
  const onPath = new Set<string>(hidden);
  for (const path of hidden) for (const dir of ancestorsOf(path)) onPath.add(dir);
  const rules: LandlockRule[] = [];
  for (const dir of [...onPath].filter((p) => !hidden.includes(p)).sort()) {
    const entries = fs.list(dir);
    if (!entries) {
      return { rules: [], hidden: [], exposed: [...exposed, ...hidden.map((path) => ({ path, why: `${dir} cannot be listed` }))] };
    }
    rules.push({ path: dir, access: "list", directory: true });
    for (const entry of entries) {
      const full = join(dir, entry.name);
      if (onPath.has(full) || entry.symlink) continue;
      rules.push({ path: full, access: "all", directory: entry.directory });
    }
  }
  return { rules, hidden, exposed };
}

/** "/", "/var", "/var/lib" for "/var/lib/agentd". */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    out.unshift(dir);
    if (dir === dirname(dir)) return out;
  }
}
