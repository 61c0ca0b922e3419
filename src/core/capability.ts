import type { Hono } from "hono";

/** Routes a capability (or the status page) serves, and where the worker's app mounts them. */
export interface Mount {
  /** "/" mounts at the root. */
  path: string;
  app: Hono;
  /** Refused to anyone but a loopback peer, whatever the bind (admin routes). */
  loopbackOnly?: boolean;
  /** The largest request body these routes take; the server's limit when left out. */
  bodyLimitBytes?: number;
}
