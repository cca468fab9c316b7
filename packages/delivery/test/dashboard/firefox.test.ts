// NOTE: these functions run in the page (page.evaluate): they need the DOM's types.
/// <reference lib="dom" />
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/test-app.js";
import { TEST_API_KEY } from "../helpers/test-app.js";
import { accessibilityViolations, firefoxAvailable, launchFirefox } from "./browser.js";
import { ASSET_BYTES, person, startDashboardService } from "./service.js";

// The dashboard in Debian's Firefox ESR (WebDriver BiDi, puppeteer-core) against the real
// service, the main path of dashboard.test.ts (Chromium): first registration, the repository
// list, adding a repository with the API key, check now with its live progress, sign-out, with
// axe-core on each page. The steps share the page and run in order.

type Bar = { value: number; max: number; label: string };

describe.skipIf(!firefoxAvailable())("the dashboard in Firefox", () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  const consoleProblems: string[] = [];

  /** The text of the first element `selector` matches, once it exists. */
  const textOf = async (selector: string) =>
    (await page.waitForSelector(selector))?.evaluate((element) => element.textContent);

  beforeAll(async () => {
    ({ t, base } = await startDashboardService());
    browser = await launchFirefox();
    page = await browser.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") consoleProblems.push(message.text());
    });
    page.on("pageerror", (error) => consoleProblems.push(`page error: ${String(error)}`));
    // Firefox reports a CSP violation as a page error; the standard event, listened to before
    // any page script runs, names the directive too.
    await page.evaluateOnNewDocument(() => {
      document.addEventListener("securitypolicyviolation", (event) =>
        console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
      );
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await t?.stub.close();
  });

  it("opens the dashboard from /, under its strict CSP, whose violations the test sees", async () => {
    const response = await page.goto(`${base}/`);
    expect(page.url()).toBe(`${base}/dashboard/`);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    // The CSP check of the last step is live: an inline script is refused, and reported.
    await page.evaluate(() => {
      const script = document.createElement("script");
      script.textContent = "document.title = 'injected'";
      document.head.append(script);
    });
    await expect
      .poll(() => consoleProblems)
      .toEqual([
        "CSP violation: script-src-elem inline",
        expect.stringMatching(/^page error: .*Content-Security-Policy.* blocked an inline script/),
      ]);
    expect(await page.title()).toBe("Release delivery");
    consoleProblems.length = 0;
  });

  it("offers the first registration while no user exists, and signs the new user in", async () => {
    expect(await textOf("main h1")).toBe("Create the first account");
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.locator("#name").fill(person.name);
    await page.locator("#email").fill(person.email);
    await page.locator("#password").fill(person.password);
    await page.locator("form.auth button[type=submit]").click();
    await page.waitForSelector("::-p-text(Signed in as ops@example.com)");
    expect(await textOf("main h1")).toBe("Repositories");
    expect(await page.evaluate(() => document.cookie)).toBe("");
    const cookies = await browser.cookies();
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly]).sort()).toEqual([
      ["access_token", true],
      ["refresh_token", true],
    ]);
  });

  it("asks for the API key to add a repository, keeps it for the tab only, then adds it", async () => {
    await page.locator("#add-repository").fill("acme/rocket");
    await page.locator("form:has(#add-repository) button[type=submit]").click();
    await expect
      .poll(() => textOf("form:has(#add-repository) .message"))
      .toContain("needs the API key");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("api-key");
    await page.locator("#api-key").fill(TEST_API_KEY);
    await page.locator("#key-panel button[type=submit]").click();
    await page.locator("form:has(#add-repository) button[type=submit]").click();
    await page.waitForSelector('tr[data-repository="acme/rocket"]');
    expect(await textOf('tr[data-repository="acme/rocket"] td')).toBe("active");
    const storage = await page.evaluate(() => ({
      session: sessionStorage.getItem("delivery.apiKey"),
      local: Object.keys(localStorage),
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: TEST_API_KEY, local: [], cookie: "" });
    expect((await browser.cookies()).map((cookie) => cookie.value)).not.toContain(TEST_API_KEY);
  });

  it("checks a repository with live progress bars, then shows the result", async () => {
    await page.waitForSelector('#live[data-connected="true"]');
    // Every value the progress bars take, recorded in the page as they change.
    await page.evaluate(() => {
      const seen: Bar[] = [];
      (window as unknown as { seen: Bar[] }).seen = seen;
      new MutationObserver((mutations) => {
        for (const mutation of mutations) {
          const bar = mutation.target;
          if (bar instanceof HTMLProgressElement) {
            seen.push({
              value: bar.value,
              max: bar.max,
              label: bar.getAttribute("aria-label") ?? "",
            });
          }
        }
      }).observe(document.getElementById("live") as HTMLElement, {
        attributes: true,
        attributeFilter: ["value"],
        subtree: true,
      });
    });
    await page.locator('button[aria-label="Check now acme/rocket"]').click();
    const result = await page.waitForSelector('li.live-card[data-status="success"] .result', {
      timeout: 60_000,
    });
    expect(await result?.evaluate((element) => element.textContent)).toBe(
      "success (manual): 1 file(s), 160.0 MiB",
    );
    const seen = await page.evaluate(() => (window as unknown as { seen: Bar[] }).seen);
    const fileBar = seen.filter((entry) => entry.label === "app.bin: file progress");
    expect(fileBar.some((entry) => entry.value > 0 && entry.value < ASSET_BYTES)).toBe(true);
    expect(fileBar.at(-1)).toEqual({
      value: ASSET_BYTES,
      max: ASSET_BYTES,
      label: "app.bin: file progress",
    });
    const releaseBar = seen.filter(
      (entry) => entry.label === "acme/rocket v1.0.0: release progress",
    );
    expect(releaseBar.at(-1)?.value).toBe(ASSET_BYTES);
    await expect
      .poll(() => textOf('tr[data-repository="acme/rocket"] .message'))
      .toBe("acme/rocket v1.0.0: 1 file(s) published");
    expect(await textOf('tr[data-repository="acme/rocket"] .status')).toBe("v1.0.0 (success)");
    expect(await accessibilityViolations(page)).toEqual([]);
  }, 90_000);

  it("signs out, after which the session is gone, with no console error or CSP violation", async () => {
    await page.locator("#nav ::-p-text(Sign out)").click();
    await page.waitForSelector("::-p-text(Sign in)");
    expect(await textOf("main h1")).toBe("Sign in");
    expect(await accessibilityViolations(page)).toEqual([]);
    // Firefox may still list a cookie cleared in this very second (empty value, expiring now)
    // until it purges it (seen once in CI): what must be gone is every cookie with a value.
    expect((await browser.cookies()).filter((cookie) => cookie.value !== "")).toEqual([]);
    expect(await page.evaluate(async () => (await fetch("/auth/profile")).status)).toBe(401);
    // Unlike Chromium, Firefox does not log a refused call (the 401 just above) to the console.
    expect(consoleProblems).toEqual([]);
  });
});
