import { api, describeError } from "./api.js";
import { formatTime, h, messageArea, showMessage } from "./dom.js";
import { withKey } from "./key-panel.js";
import { type HistoryRecord, type ReleaseResult, type Repository, summarize } from "./wire.js";

type Reload = (flashKey: string, text: string, kind: "ok" | "error") => void;

/** Messages to show again once the page is drawn anew after an action (keyed by row). */
const flashes = new Map<string, { text: string; kind: "ok" | "error" }>();

function flashArea(key: string): HTMLParagraphElement {
  const area = messageArea();
  const flash = flashes.get(key);
  flashes.delete(key);
  if (flash) showMessage(area, flash.text, flash.kind);
  return area;
}

/** The newest history record of each repository (the history is newest first). */
function latestByRepository(history: readonly HistoryRecord[]): Map<string, HistoryRecord> {
  const latest = new Map<string, HistoryRecord>();
  for (const record of history) {
    const key = record.repository.toLowerCase();
    if (!latest.has(key)) latest.set(key, record);
  }
  return latest;
}

const repoLink = (repository: Repository) =>
  h(
    "a",
    {
      href: `#/repository/${encodeURIComponent(repository.owner)}/${encodeURIComponent(repository.name)}`,
    },
    repository.full_name,
  );

function row(repository: Repository, latest: HistoryRecord | undefined, reload: Reload) {
  const path = `${repository.owner}/${repository.name}`;
  const message = flashArea(repository.full_name);
  const button = (label: string, action: () => void) =>
    h("button", { type: "button", onclick: action, "aria-label": `${label} ${path}` }, label);
  return h(
    "tr",
    { "data-repository": repository.full_name },
    h("th", { scope: "row" }, repoLink(repository)),
    h("td", {}, repository.active ? "active" : "inactive"),
    h("td", {}, formatTime(repository.last_check)),
    h(
      "td",
      {},
      latest
        ? h("span", { class: `status ${latest.status}` }, `${latest.tag} (${latest.status})`)
        : "none",
    ),
    h(
      "td",
      { class: "actions" },
      button("Check now", async () => {
        showMessage(message, "Checking…", "ok");
        try {
          const result = await api<ReleaseResult>(`/monitor/check/${path}`, { method: "POST" });
          reload(
            repository.full_name,
            summarize(result),
            result.errors.length > 0 ? "error" : "ok",
          );
        } catch (error) {
          showMessage(message, describeError(error), "error");
        }
      }),
      button(repository.active ? "Deactivate" : "Activate", () =>
        withKey(repository.active ? "Deactivating" : "Activating", message, async () => {
          await api(`/monitor/repositories/${repository.id}`, {
            method: "PATCH",
            body: { active: !repository.active },
            withKey: true,
          });
          const done = `${path} is now ${repository.active ? "inactive" : "active"}`;
          reload(repository.full_name, done, "ok");
          return done;
        }),
      ),
      button("Install webhook", () =>
        withKey("Installing the webhook", message, async () => {
          await api(`/monitor/webhooks/${path}`, { method: "POST", withKey: true });
          return `Webhook installed on ${path}`;
        }),
      ),
      button("Delete", () => {
        if (!window.confirm(`Delete ${path} and its release history?`)) return;
        void withKey("Deleting the repository", message, async () => {
          await api(`/monitor/repositories/${repository.id}`, { method: "DELETE", withKey: true });
          reload("add", `${path} deleted`, "ok");
          return `${path} deleted`;
        });
      }),
      message,
    ),
  );
}

/** Repositories: list with filter, check now / check all, and the API-key actions. */
export async function repositoriesPage(main: HTMLElement): Promise<void> {
  const [{ repositories }, { history }] = await Promise.all([
    api<{ repositories: Repository[] }>("/monitor/repositories"),
    api<{ history: HistoryRecord[] }>("/monitor/history?limit=500"),
  ]);
  const latest = latestByRepository(history);
  const reload: Reload = (key, text, kind) => {
    flashes.set(key, { text, kind });
    // Drawn again by the router, which shows a failure of the page itself.
    window.dispatchEvent(new HashChangeEvent("hashchange"));
  };
  const body = h("tbody");
  const filter = h("input", { id: "filter", type: "search", autocomplete: "off" });
  const activeOnly = h("input", { id: "active-only", type: "checkbox" });
  const render = () => {
    const text = filter.value.trim().toLowerCase();
    body.replaceChildren(
      ...repositories
        .filter((repository) => repository.full_name.toLowerCase().includes(text))
        .filter((repository) => !activeOnly.checked || repository.active)
        .map((repository) =>
          row(repository, latest.get(repository.full_name.toLowerCase()), reload),
        ),
    );
  };
  filter.addEventListener("input", render);
  activeOnly.addEventListener("change", render);
  render();

  const allMessage = flashArea("all");
  const checkAll = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        showMessage(allMessage, "Checking every active repository…", "ok");
        try {
          const answer = await api<{
            checked: number;
            results: Array<ReleaseResult | { repository: string; error: string }>;
          }>("/monitor/check-all", { method: "POST" });
          const failed = answer.results.filter((result) => "error" in result);
          const lines = failed.map(
            (result) => `${result.repository}: ${"error" in result ? result.error : ""}`,
          );
          reload(
            "all",
            `${answer.checked} checked${lines.length > 0 ? `; failed: ${lines.join("; ")}` : ""}`,
            lines.length > 0 ? "error" : "ok",
          );
        } catch (error) {
          showMessage(allMessage, describeError(error), "error");
        }
      },
    },
    "Check all",
  );

  const addMessage = flashArea("add");
  const addInput = h("input", { id: "add-repository", placeholder: "owner/repo", required: true });
  const addForm = h(
    "form",
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        void withKey("Adding a repository", addMessage, async () => {
          await api("/monitor/repositories", {
            method: "POST",
            body: { repository: addInput.value.trim() },
            withKey: true,
          });
          const done = `${addInput.value.trim()} added`;
          reload("add", done, "ok");
          return done;
        });
      },
    },
    h("label", { for: "add-repository" }, "Repository to add (owner/repo; needs the API key)"),
    addInput,
    h("button", { type: "submit" }, "Add"),
    addMessage,
  );

  main.replaceChildren(
    h("h1", {}, "Repositories"),
    h(
      "div",
      { class: "toolbar" },
      h("label", { for: "filter" }, "Filter"),
      filter,
      h("label", { for: "active-only" }, activeOnly, " active only"),
      checkAll,
      allMessage,
    ),
    h(
      "table",
      {},
      h("caption", {}, `${repositories.length} repositories`),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["Repository", "State", "Last check", "Latest release", "Actions"].map((title) =>
            h("th", { scope: "col" }, title),
          ),
        ),
      ),
      body,
    ),
    addForm,
  );
}
