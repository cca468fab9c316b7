import { api, describeError, SessionEnded } from "./api.js";
import { authPage } from "./auth-pages.js";
import { h } from "./dom.js";
import { keyPanel } from "./key-panel.js";
import { livePanel } from "./live.js";
import { repositoriesPage } from "./repositories-page.js";
import { repositoryPage } from "./repository-page.js";
import { statusPage } from "./status-page.js";
import type { User } from "./wire.js";

// The dashboard's router: `#/repositories`, `#/repository/<owner>/<name>`, `#/status`, and
// `#/sign-in?next=<page>` (the page a person was on when the session could not be renewed).

const main = document.getElementById("main") as HTMLElement;
const nav = document.getElementById("nav") as HTMLElement;
const side = document.getElementById("side") as HTMLElement;
const HOME = "/repositories";

let user: User | null = null;
let live: ReturnType<typeof livePanel> | null = null;

function currentPage(): { path: string; next: string | null } {
  const [path = "", query = ""] = location.hash.replace(/^#/, "").split("?");
  return { path: path || HOME, next: new URLSearchParams(query).get("next") };
}

function signedIn(who: User): void {
  user = who;
  live?.stop();
  live = livePanel();
  side.replaceChildren(live.element, keyPanel());
  nav.replaceChildren(
    h("a", { href: `#${HOME}` }, "Repositories"),
    h("a", { href: "#/status" }, "Status"),
    h("span", { class: "who" }, `Signed in as ${who.email}`),
    h("button", { type: "button", onclick: () => void signOut() }, "Sign out"),
  );
}

function signedOut(next: string | null): void {
  user = null;
  live?.stop();
  live = null;
  side.replaceChildren();
  nav.replaceChildren();
  location.hash = next ? `#/sign-in?next=${encodeURIComponent(next)}` : "#/sign-in";
}

async function signOut(): Promise<void> {
  try {
    await api("/auth/logout", { method: "POST" });
    signedOut(null);
  } catch (error) {
    window.alert(`Signing out failed: ${describeError(error)}`);
  }
}

async function showPage(path: string): Promise<void> {
  const repository = /^\/repository\/([^/]+)\/([^/]+)$/.exec(path);
  if (repository) {
    return repositoryPage(
      main,
      decodeURIComponent(repository[1] ?? ""),
      decodeURIComponent(repository[2] ?? ""),
    );
  }
  if (path === "/status") return statusPage(main);
  return repositoriesPage(main);
}

async function render(): Promise<void> {
  const { path, next } = currentPage();
  try {
    if (path === "/sign-in") {
      if (user) {
        location.hash = `#${next ?? HOME}`;
        return;
      }
      return await authPage(main, (who) => {
        signedIn(who);
        location.hash = `#${next ?? HOME}`;
      });
    }
    if (!user) signedIn((await api<{ user: User }>("/auth/profile")).user);
    await showPage(path);
    main.focus();
  } catch (error) {
    if (error instanceof SessionEnded) return signedOut(path);
    main.replaceChildren(
      h("h1", {}, "Something failed"),
      h("p", { class: "message", "data-kind": "error", role: "alert" }, describeError(error)),
    );
  }
}

window.addEventListener("hashchange", () => void render());
void render();
