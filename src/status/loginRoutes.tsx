import { Hono, type Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { timingSafeEqual } from "node:crypto";
import { TOKEN_COOKIE } from "../http/bearerAuth.ts";
import { sameOriginGuard } from "../http/csrfGuard.ts";
import { Layout, pageTitle, renderDocument, STATUS_CSP } from "./statusLayout.tsx";

/** Paths bearerAuth must let through, so a browser without the token can reach the form. */
export const LOGIN_PATHS: readonly string[] = ["/login"];

const COOKIE_MAX_AGE_S = 30 * 24 * 3600;

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function LoginPage({ error, next }: { error?: string; next: string }) {
  return (
    <Layout title={pageTitle("sign in")} single>
      <section class="card">
        <h2>Sign in</h2>
        <p class="note">This agentd listens beyond the local host, so its page needs the API token (the file token in its data dir).</p>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <form class="login" method="post" action="/login">
          <input type="hidden" name="next" value={next} />
          <label for="token">API token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required autofocus />
          <button type="submit">Sign in</button>
        </form>
      </section>
    </Layout>
  );
}

/** Only paths of this agentd's own pages: an open redirect would let a link send the user anywhere. */
export function safeNext(next: string | undefined): string {
  return next && /^\/(?!\/)[\w\-./?=&%]*$/.test(next) && !next.includes("\\") ? next : "/status";
}

function page(c: Context, status: 200 | 401, error: string | undefined, next: string): Response {
  return c.body(renderDocument(<LoginPage error={error} next={next} />), status, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": STATUS_CSP,
    "Cache-Control": "no-store",
  });
}

/**
 * GET/POST /login and POST /logout, for non-loopback binds: the form takes the token once and
 * keeps it in an HttpOnly cookie that bearerAuth accepts, so page scripts never see it.
 */
export function loginRoutes(options: { token: string }): Hono {
  const app = new Hono();
  app.use("/login", sameOriginGuard());
  app.use("/logout", sameOriginGuard());
  app.get("/login", (c) => page(c, 200, undefined, safeNext(c.req.query("next"))));
  app.post("/login", async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(typeof form.next === "string" ? form.next : undefined);
    const given = typeof form.token === "string" ? form.token.trim() : "";
    if (!given || !sameSecret(given, options.token)) return page(c, 401, "That is not this agentd's token.", next);
    setCookie(c, TOKEN_COOKIE, options.token, {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      maxAge: COOKIE_MAX_AGE_S,
      secure: new URL(c.req.url).protocol === "https:",
    });
    return c.redirect(next, 303);
  });
  app.post("/logout", (c) => {
    deleteCookie(c, TOKEN_COOKIE, { path: "/" });
    return c.redirect("/login", 303);
  });
  return app;
}
