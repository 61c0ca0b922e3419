import type { Mount } from "../core/capability.ts";
import { LOGIN_PATHS, loginRoutes } from "./loginRoutes.tsx";
import { PUBLIC_ASSET_PATHS } from "./statusAssets.ts";
import { statusRoutes } from "./statusRoutes.ts";
import type { StatusSource } from "./statusSnapshot.ts";

/**
 * The page as the worker mounts it: /status (with its assets and badges), and the sign-in form
 * when a token is required, with the paths that form needs before the browser holds the token.
 */
export function statusPageMounts(source: StatusSource, options: { requiredToken?: string }): { mounts: Mount[]; publicPaths: string[] } {
  const mounts: Mount[] = [{ path: "/", app: statusRoutes(source) }];
  if (!options.requiredToken) return { mounts, publicPaths: [] };
  mounts.push({ path: "/", app: loginRoutes({ token: options.requiredToken }) });
  return { mounts, publicPaths: [...LOGIN_PATHS, ...PUBLIC_ASSET_PATHS] };
}
