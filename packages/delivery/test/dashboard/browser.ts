// NOTE: these functions run in the page (page.evaluate): they need the DOM's types.
/// <reference lib="dom" />
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { makeTempDir } from "@rd/common/test-kit";
import { type BrowserContext, chromium } from "playwright-core";
import puppeteer, { type Browser } from "puppeteer-core";

/** Debian's Chromium (`apt-get install chromium`), which CI installs where missing. */
export const CHROMIUM = "/usr/bin/chromium";
/** Debian's Firefox ESR (`apt-get install firefox-esr`), which CI installs where missing. */
export const FIREFOX = "/usr/bin/firefox-esr";

/**
 * Whether a browser's tests can run. Without the browser they are skipped with a loud message,
 * except under `CI=true`, where a missing browser is a failure (like a missing MariaDB).
 */
function installed(browser: string, path: string, debianPackage: string): boolean {
  if (existsSync(path)) return true;
  if (process.env.CI === "true") {
    throw new Error(`${browser} is required under CI=true but ${path} does not exist`);
  }
  console.warn(
    `\n!!! ${browser} is not installed at ${path} (apt-get install ${debianPackage}): the dashboard's ${browser} tests are SKIPPED !!!\n`,
  );
  return false;
}

export const chromiumAvailable = (): boolean => installed("Chromium", CHROMIUM, "chromium");
export const firefoxAvailable = (): boolean => installed("Firefox", FIREFOX, "firefox-esr");

/** A headless Chromium with a fresh profile; `close` removes the profile too. */
export async function launchBrowser(): Promise<{
  context: BrowserContext;
  close(): Promise<void>;
}> {
  const profile = await makeTempDir("rd-chromium-");
  const context = await chromium.launchPersistentContext(profile.path, {
    executablePath: CHROMIUM,
    headless: true,
    // NOTE: without the background-networking flags, Chromium's own connections at start-up
    // get refused on these machines and slow every launch.
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1280, height: 800 },
  });
  return {
    context,
    async close() {
      await context.close();
      await profile.remove();
    },
  };
}

/**
 * A headless Firefox ESR driven over WebDriver BiDi (puppeteer-core: Playwright's Firefox is a
 * patched build of its own that only its download site provides). Puppeteer gives it a fresh
 * profile, which `close` removes.
 */
export function launchFirefox(): Promise<Browser> {
  return puppeteer.launch({
    browser: "firefox",
    executablePath: FIREFOX,
    headless: true,
    defaultViewport: { width: 1280, height: 800 },
  });
}

const axeSource = readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

type Violation = { id: string; impact: string; help: string; nodes: unknown[] };

/** What a Playwright and a Puppeteer page both offer: running a script, then a function, in it. */
interface Evaluates {
  evaluate(script: string): Promise<unknown>;
  evaluate(run: () => Promise<Violation[]>): Promise<Violation[]>;
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function accessibilityViolations(page: Evaluates): Promise<string[]> {
  // NOTE: evaluated through the browser's automation protocol (DevTools or BiDi), which the
  // page's CSP does not govern (an injected <script> would be refused by `script-src 'self'`).
  await page.evaluate(await axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: unknown[] }> } }).axe;
    return (await axe.run()).violations as Violation[];
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} ×${violation.nodes.length}`,
    );
}
