import { Hono, type Context } from "hono";
import { deleteCookie, setCookie } from "hono/cookie";
import { timingSafeEqual } from "node:crypto";
import { TOKEN_COOKIE } from "../http/bearerAuth.ts";
import { sameOriginGuard } from "../http/csrfGuard.ts";
import { Layout, pageTitle, renderDocument, STATUS_CSP } from "./statusLayout.tsx";
import { MAX_PERSON_NAME, personNameProblem } from "../watchdog/index.ts";

/** Paths bearerAuth must let through, so a browser without the token can reach the form. */
export const LOGIN_PATHS: readonly string[] = ["/login"];

const COOKIE_MAX_AGE_S = 30 * 24 * 3600;

/** The name typed at sign-in, kept with the page's session: incidents acknowledged or resolved there say `page:<name>`. */
export const PERSON_COOKIE = "agentd_person";

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function LoginPage({ error, next, name }: { error?: string; next: string; name: string }) {
  return (
    <Layout title={pageTitle("sign in")} single>
      <section class="card">
        <h2>Sign in</h2>
        <p class="note">
          This agentd's page needs its API token (the file token in its data dir): it listens beyond the local host, or it was started as
          root, where decisions need the token.
        </p>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <form class="login" method="post" action="/login">
          <input type="hidden" name="next" value={next} />
          <label for="name">Your name</label>
          <input id="name" name="name" type="text" autocomplete="name" maxlength={MAX_PERSON_NAME} value={name} required autofocus />
          <p class="note">Recorded with what you acknowledge or resolve here; it names you, it does not prove who you are.</p>
          <label for="token">API token</label>
          <input id="token" name="token" type="password" autocomplete="current-password" required />
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

function page(c: Context, status: 200 | 400 | 401, error: string | undefined, next: string, name = ""): Response {
  return c.body(renderDocument(<LoginPage error={error} next={next} name={name} />), status, {
    "Content-Type": "text/html; charset=utf-8",
    "Content-Security-Policy": STATUS_CSP,
    "Cache-Control": "no-store",
  });
}

/**
 * GET/POST /login and POST /logout, where a token is required: the form takes the token once and
 * keeps it in an HttpOnly cookie that bearerAuth accepts, so page scripts never see it, with the
 * person's name beside it for the incidents they move.
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
    const name = typeof form.name === "string" ? form.name.trim() : "";
    // The name typed is shown back (escaped) so a refused form keeps it; the token never is.
    const problem = personNameProblem(name);
    if (problem) return page(c, 400, `Cannot sign in with that name: ${problem}.`, next, name.slice(0, MAX_PERSON_NAME * 2));
    if (!given || !sameSecret(given, options.token)) return page(c, 401, "That is not this agentd's token.", next, name);
    const cookie = {
      httpOnly: true,
      sameSite: "Strict",
      path: "/",
      maxAge: COOKIE_MAX_AGE_S,
      secure: new URL(c.req.url).protocol === "https:",
    } as const;
    setCookie(c, TOKEN_COOKIE, options.token, cookie);
    setCookie(c, PERSON_COOKIE, name, cookie);
    return c.redirect(next, 303);
  });
  app.post("/logout", (c) => {
    deleteCookie(c, TOKEN_COOKIE, { path: "/" });
    deleteCookie(c, PERSON_COOKIE, { path: "/" });
    return c.redirect("/login", 303);
  });
  return app;
}
