import { chromium, type BrowserContext, type Page } from "playwright-core";
import { existsSync } from "node:fs";
import { makeTempDir } from "./tempDir.ts";

/** Debian's chromium (apt-get install -y chromium); playwright-core brings no browser of its own. */
export const CHROMIUM = "/usr/bin/chromium";

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  /** Console errors and uncaught page errors, in order. */
  errors: string[];
  /** Every URL the page requested. */
  requests: string[];
  close(): Promise<void>;
}

export interface BrowserOptions {
  javaScriptEnabled?: boolean;
  viewport?: { width: number; height: number };
  /**
   * Signed in to the agentd at `url` (its token cookie): started as root, as the tests run,
   * decisions from the page need the token, which the person at the browser has.
   */
  signedIn?: { url: string; token: string | undefined };
}

/** A headless Chromium with a fresh profile in a temp dir; close() ends the browser process. */
export async function openBrowser(options: BrowserOptions = {}): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with 'apt-get install -y chromium'`);
  const context = await chromium.launchPersistentContext(makeTempDir("agentd-chromium-"), {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    javaScriptEnabled: options.javaScriptEnabled ?? true,
    viewport: options.viewport ?? { width: 1280, height: 900 },
    timeout: 60_000,
  });
  if (options.signedIn?.token)
    await context.addCookies([{ name: "agentd_token", value: options.signedIn.token, url: options.signedIn.url }]);
  const page = context.pages()[0] ?? (await context.newPage());
  const errors: string[] = [];
  const requests: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`));
  page.on("request", (request) => requests.push(request.url()));
  return { context, page, errors, requests, close: () => context.close() };
}
