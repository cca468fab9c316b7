// NOTE: these functions run in the page (page.evaluate): they need the DOM's types.
/// <reference lib="dom" />
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TEST_API_KEY, type TestApp } from "../helpers/test-app.js";
import { accessibilityViolations, chromiumAvailable, launchBrowser } from "./browser.js";
import { ASSET_BYTES, person, startDashboardService } from "./service.js";

// The dashboard in Debian's Chromium against the real service (SQLite, local storage, the
// code-host stub), one person's session from the first registration to sign-out. The steps
// share the page and run in order.

const SCREENSHOTS = join(import.meta.dirname, "../../docs");
const HOUR_MS = 3_600_000;

describe.skipIf(!chromiumAvailable())("the dashboard in Chromium", () => {
  let t: TestApp;
  let base: string;
  let browser: Awaited<ReturnType<typeof launchBrowser>>;
  let context: BrowserContext;
  let page: Page;
  let attacker: Server;
  const consoleProblems: string[] = [];
  const refreshes: number[] = [];

  beforeAll(async () => {
    ({ t, base } = await startDashboardService());
    browser = await launchBrowser();
    context = browser.context;
    page = await context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") consoleProblems.push(message.text());
    });
    page.on("request", (request) => {
      if (request.url().endsWith("/auth/refresh")) refreshes.push(Date.now());
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => (attacker ? attacker.close(resolve) : resolve(undefined)));
    await t?.close();
    await t?.stub.close();
  });

  it("sends browsers from / to the dashboard, with a strict CSP, while API clients keep the JSON", async () => {
    const api = await fetch(`${base}/`, { headers: { accept: "application/json" } });
    expect(await api.json()).toMatchObject({ message: "Release-delivery service" });
    const response = await page.goto(`${base}/`);
    expect(page.url()).toBe(`${base}/dashboard/`);
    const csp = response?.headers()["content-security-policy"] ?? "";
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
  });

  it("offers the first registration while no user exists, and signs the new user in", async () => {
    await page.getByRole("heading", { name: "Create the first account" }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard-first-account.png") });
    await page.getByLabel("Name").fill(person.name);
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(person.password);
    await page.getByRole("button", { name: "Create the first account" }).click();
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
    // No token is readable by the page: both cookies are HttpOnly.
    expect(await page.evaluate(() => document.cookie)).toBe("");
    const cookies = await context.cookies(base);
    expect(cookies.map((cookie) => [cookie.name, cookie.httpOnly]).sort()).toEqual([
      ["access_token", true],
      ["refresh_token", true],
    ]);
  });

  it("asks for the API key to add a repository, keeps it for the tab only, then adds it", async () => {
    await page.getByLabel(/Repository to add/).fill("acme/rocket");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await expect
      .poll(() => page.locator("form .message").first().textContent())
      .toContain("needs the API key");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("api-key");
    await page.locator("#api-key").fill(TEST_API_KEY);
    await page.getByRole("button", { name: "Keep for this tab" }).click();
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await page.locator('tr[data-repository="acme/rocket"]').waitFor();
    const storage = await page.evaluate(() => ({
      session: sessionStorage.getItem("delivery.apiKey"),
      local: Object.keys(localStorage),
      cookie: document.cookie,
    }));
    expect(storage).toEqual({ session: TEST_API_KEY, local: [], cookie: "" });
    expect((await context.cookies(base)).map((cookie) => cookie.value)).not.toContain(TEST_API_KEY);
  });

  it("shows the service's message next to the action that failed", async () => {
    await page.getByLabel(/Repository to add/).fill("acme/rocket");
    await page.getByRole("button", { name: "Add", exact: true }).click();
    await expect
      .poll(() => page.locator("form .message").first().textContent())
      .toMatch(/^Repository acme\/rocket is already registered.* \(409\)$/);
  });

  it("checks a repository with live progress bars, then shows the result", async () => {
    await page.locator('#live[data-connected="true"]').waitFor();
    // Every value the progress bars take, recorded in the page as they change.
    await page.evaluate(() => {
      const seen: Array<{ value: number; max: number; label: string }> = [];
      (window as unknown as { seen: typeof seen }).seen = seen;
      new MutationObserver((mutations) => {
        for (const mutation of mutations) {
          const bar = mutation.target as HTMLProgressElement;
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
    await page.getByRole("button", { name: "Check now acme/rocket" }).click();
    const result = page.locator('li.live-card[data-status="success"] .result');
    await result.waitFor({ timeout: 60_000 });
    expect(await result.textContent()).toBe("success (manual): 1 file(s), 160.0 MiB");
    const seen = await page.evaluate(
      () =>
        (window as unknown as { seen: Array<{ value: number; max: number; label: string }> }).seen,
    );
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
      .poll(() => page.locator('tr[data-repository="acme/rocket"] .message').textContent())
      .toBe("acme/rocket v1.0.0: 1 file(s) published");
    expect(await page.locator('tr[data-repository="acme/rocket"] .status').textContent()).toBe(
      "v1.0.0 (success)",
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard-repositories.png") });
  }, 90_000);

  it("shows a repository's history and chart, reprocesses it and lists the dry run", async () => {
    await page.getByRole("link", { name: "acme/rocket" }).click();
    await page.getByRole("heading", { name: "acme/rocket", exact: true }).waitFor();
    expect(await page.locator("#history tbody tr").count()).toBe(1);
    // Beside the bar of its bytes, the publication's bar of its duration, as the API records it.
    expect(await page.locator(".chart rect.bar.size").count()).toBe(1);
    expect(await page.locator(".chart rect.bar.duration").count()).toBe(1);
    const recorded = await page.evaluate(async () => {
      const reply = await fetch("/monitor/history/acme/rocket");
      return ((await reply.json()) as { history: Array<{ duration_ms: number | null }> }).history;
    });
    expect(recorded).toHaveLength(1);
    expect(recorded[0]?.duration_ms).toBeGreaterThan(0);
    const shown = (await page.locator("#history tbody td").nth(5).textContent()) ?? "";
    // The table shows the recorded duration, rounded to its unit.
    const [, amount = "", unit] = /^(\d+(?:\.\d)?) (ms|s)$/.exec(shown) ?? [];
    const ms = Number(amount) * (unit === "s" ? 1000 : 1);
    expect(Math.abs(ms - (recorded[0]?.duration_ms ?? -1))).toBeLessThanOrEqual(50);
    expect(await page.locator(".chart rect.bar.duration title").textContent()).toBe(
      `v1.0.0: took ${shown}`,
    );
    // The only publication is the longest: its duration bar spans the chart's full height.
    expect(await page.locator(".chart rect.bar.duration").getAttribute("height")).toBe("120");
    await page.getByRole("button", { name: "Reprocess latest" }).click();
    await expect
      .poll(() => page.locator("#actions-message").textContent(), { timeout: 60_000 })
      .toBe("acme/rocket v1.0.0: 1 file(s) published");
    await expect
      .poll(() => page.locator("#history tbody td").nth(2).textContent())
      .toBe("reprocess");
    // The second publication has a card of its own in the live panel.
    await expect
      .poll(() => page.locator("li.live-card .result").allTextContents())
      .toEqual([
        "success (reprocess): 1 file(s), 160.0 MiB",
        "success (manual): 1 file(s), 160.0 MiB",
      ]);
    await page.getByRole("button", { name: "List releases (dry run)" }).click();
    await expect
      .poll(() => page.locator("#dry-run li").textContent())
      .toContain("app.bin (160.0 MiB)");
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard-repository.png"), fullPage: true });
  }, 90_000);

  it("refreshes an expired access token silently", async () => {
    t.clock.advance(25 * HOUR_MS);
    // The status page tells when the scheduler's next round is due.
    const nextRound = new Date(t.clock.now().getTime() + 10 * 60_000).toISOString();
    t.scheduler.setRunning(true);
    t.scheduler.setNextRoundAt(new Date(nextRound));
    const before = refreshes.length;
    await page.getByRole("link", { name: "Status" }).click();
    await page.getByRole("heading", { name: "Status" }).waitFor();
    expect(refreshes.length).toBeGreaterThan(before);
    expect(await page.locator("dl").textContent()).toContain("Releases in the last 24 h");
    expect(await page.locator("#next-round").textContent()).toBe(
      await page.evaluate((iso) => new Date(iso).toLocaleString(), nextRound),
    );
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "dashboard-status.png"), fullPage: true });
    t.scheduler.setRunning(false);
  });

  it("returns to sign-in when the session cannot be renewed, then back to the page", async () => {
    t.clock.advance(8 * 24 * HOUR_MS);
    await page.goto(`${base}/dashboard/#/repository/acme/rocket`);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(page.url()).toContain("next=%2Frepository%2Facme%2Frocket");
    expect(await accessibilityViolations(page)).toEqual([]);
    // Someone guessing another account's password is throttled, and told when to retry.
    await page.getByLabel("Email").fill("intruder@example.com");
    await page.getByLabel("Password").fill("not the password");
    const message = page.locator("form .message");
    for (let attempt = 1; attempt <= 11; attempt++) {
      const answered = page.waitForResponse((response) => response.url().endsWith("/auth/login"));
      await page.getByRole("button", { name: "Sign in" }).click();
      await answered;
    }
    await expect
      .poll(() => message.textContent())
      .toMatch(/^Rate limit exceeded, retry in .* \(too many requests: retry in \d+ s, at .+\)$/);
    await page.getByLabel("Email").fill(person.email);
    await page.getByLabel("Password").fill(person.password);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "acme/rocket", exact: true }).waitFor();
  });

  it("refuses a cross-site form post and a cross-site fetch against the signed-in session", async () => {
    const downloads = () => t.stub.state.requests.filter((r) => r.path.includes("/assets/")).length;
    const history = async () =>
      (
        await t.app.inject({ url: "/monitor/history", headers: { "x-api-key": TEST_API_KEY } })
      ).json().total as number;
    const [downloadsBefore, historyBefore] = [downloads(), await history()];
    // `localhost` is another site than `127.0.0.1` for the browser.
    attacker = createServer((_request, response) => {
      response.setHeader("content-type", "text/html");
      response.end(`<!doctype html><title>elsewhere</title>
        <form id="f" method="post" action="${base}/monitor/reprocess/acme/rocket"></form>
        <script>
          fetch("${base}/monitor/reprocess/acme/rocket", { method: "POST", mode: "no-cors", credentials: "include" })
            .finally(() => document.getElementById("f").submit());
        </script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
    const evil = await context.newPage();
    const answers: Array<{ status: number; body: string }> = [];
    evil.on("response", async (response) => {
      if (response.url().includes("/monitor/reprocess/")) {
        answers.push({ status: response.status(), body: await response.text().catch(() => "") });
      }
    });
    await evil.goto(`http://localhost:${(attacker.address() as AddressInfo).port}/`);
    await evil.waitForURL(`${base}/monitor/reprocess/acme/rocket`);
    expect(await evil.locator("body").textContent()).toContain("Cross-site request refused");
    await evil.close();
    expect(answers.map((answer) => answer.status)).toEqual([403, 403]);
    expect(downloads()).toBe(downloadsBefore);
    expect(await history()).toBe(historyBefore);
    // The same call from the dashboard itself still works.
    const own = await page.evaluate(async () => (await fetch("/monitor/history")).status);
    expect(own).toBe(200);
  });

  it("is usable from the keyboard with a visible focus", async () => {
    await page.goto(`${base}/dashboard/#/repositories`);
    await page.getByRole("heading", { name: "Repositories" }).waitFor();
    // From the header (the router focuses the content after each page change): the skip link
    // comes first, with a visible focus ring, then the navigation.
    await page.mouse.click(5, 5);
    await page.keyboard.press("Shift+Tab");
    const focused = () =>
      page.evaluate(() => ({
        text: document.activeElement?.textContent,
        outline: getComputedStyle(document.activeElement as Element).outlineStyle,
      }));
    expect(await focused()).toEqual({ text: "Skip to the content", outline: "solid" });
    await page.keyboard.press("Tab");
    expect(await focused()).toEqual({ text: "Repositories", outline: "solid" });
    await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Status" }).waitFor();
    expect(await page.locator("#next-round").textContent()).toBe("none (the scheduler is off)");
  });

  it("signs out, after which the session is gone", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await context.cookies(base)).toEqual([]);
    const check = await page.evaluate(async () => (await fetch("/auth/profile")).status);
    expect(check).toBe(401);
    // No page ever broke its CSP or failed a script (the refusals the steps provoked aside).
    const provoked =
      /^Failed to load resource: the server responded with a status of (401|409|429)/;
    expect(consoleProblems.filter((text) => !provoked.test(text))).toEqual([]);
  });
});
