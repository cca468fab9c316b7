import { api, describeError } from "./api.js";
import {
  formatBytes,
  formatDuration,
  formatTime,
  h,
  messageArea,
  showMessage,
  svg,
} from "./dom.js";
import type { DryRun, HistoryRecord, ReleaseResult } from "./wire.js";
import { summarize } from "./wire.js";

const CHART = { width: 560, height: 160, pad: 28 };

/**
 * Per publication, oldest to newest, a bar of the bytes it wrote (failed ones in their colour)
 * and beside it a bar of how long it took, each on its own scale (bytes left, time right).
 */
function publicationChart(history: readonly HistoryRecord[]): Element {
  const records = [...history].reverse();
  const max = Math.max(1, ...records.map((record) => record.total_bytes));
  const maxMs = Math.max(1, ...records.map((record) => record.duration_ms ?? 0));
  const slot = (CHART.width - 2 * CHART.pad) / Math.max(records.length, 1);
  const barHeight = (share: number) => (CHART.height - 40) * share;
  const chart = svg(
    "svg",
    {
      viewBox: `0 0 ${CHART.width} ${CHART.height}`,
      role: "img",
      "aria-labelledby": "chart-title",
      class: "chart",
    },
    svg(
      "title",
      { id: "chart-title" },
      `Bytes published (up to ${formatBytes(max)}) and duration (up to ${formatDuration(maxMs)}) per release`,
    ),
    svg("text", { x: 0, y: 12, class: "axis" }, formatBytes(max)),
    svg("text", { x: CHART.width, y: 12, class: "axis end" }, formatDuration(maxMs)),
    svg("line", {
      x1: CHART.pad,
      y1: CHART.height - 16,
      x2: CHART.width - CHART.pad,
      y2: CHART.height - 16,
      class: "axis",
    }),
  );
  const bar = (x: number, height: number, kind: string, title: string) =>
    svg(
      "rect",
      {
        x,
        y: CHART.height - 16 - height,
        width: slot * 0.35,
        height: Math.max(height, 1),
        class: `bar ${kind}`,
      },
      svg("title", {}, title),
    );
  records.forEach((record, index) => {
    const x = CHART.pad + index * slot + slot * 0.15;
    const size = `${record.tag}: ${formatBytes(record.total_bytes)} (${record.status})`;
    chart.append(bar(x, barHeight(record.total_bytes / max), `size ${record.status}`, size));
    if (record.duration_ms !== null) {
      const took = `${record.tag}: took ${formatDuration(record.duration_ms)}`;
      chart.append(bar(x + slot * 0.35, barHeight(record.duration_ms / maxMs), "duration", took));
    }
    chart.append(
      svg("text", { x: x + slot * 0.35, y: CHART.height - 2, class: "label" }, record.tag),
    );
  });
  return chart;
}

function historyTable(history: readonly HistoryRecord[]): HTMLTableElement {
  return h(
    "table",
    { id: "history" },
    h("caption", {}, `Release history (${history.length})`),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ...["Tag", "Status", "When", "Trigger", "Files", "Bytes", "Duration", "Errors"].map(
          (title) => h("th", { scope: "col" }, title),
        ),
      ),
    ),
    h(
      "tbody",
      {},
      ...history.map((record) =>
        h(
          "tr",
          {},
          h("th", { scope: "row" }, record.tag || "(none)"),
          h("td", {}, h("span", { class: `status ${record.status}` }, record.status)),
          h("td", {}, formatTime(record.processed_at)),
          h("td", {}, record.trigger),
          h("td", {}, record.files_count),
          h("td", {}, formatBytes(record.total_bytes)),
          h("td", {}, formatDuration(record.duration_ms)),
          h("td", { class: "errors" }, record.errors.join("; ")),
        ),
      ),
    ),
  );
}

function dryRunList(dryRun: DryRun): HTMLElement {
  return h(
    "ul",
    { id: "dry-run" },
    ...dryRun.releases.map((release) =>
      h(
        "li",
        {},
        h("strong", {}, release.tag),
        ` ${release.name} (${formatTime(release.created_at)})${release.draft ? " draft" : ""}${release.prerelease ? " prerelease" : ""}: `,
        release.assets.map((asset) => `${asset.name} (${formatBytes(asset.size)})`).join(", ") ||
          "no assets",
      ),
    ),
  );
}

/** One repository: actions, the chart, its history and the dry-run listing. */
export async function repositoryPage(
  main: HTMLElement,
  owner: string,
  name: string,
): Promise<void> {
  const path = `${encodeURIComponent(owner)}/${encodeURIComponent(name)}`;
  const { history } = await api<{ history: HistoryRecord[] }>(`/monitor/history/${path}`);
  const message = messageArea();
  message.id = "actions-message";
  const run = async (what: string, url: string) => {
    showMessage(message, `${what}…`, "ok");
    try {
      const result = await api<ReleaseResult>(url, { method: "POST" });
      showMessage(message, summarize(result), result.errors.length > 0 ? "error" : "ok");
      const fresh = await api<{ history: HistoryRecord[] }>(`/monitor/history/${path}`);
      main.querySelector("#history")?.replaceWith(historyTable(fresh.history));
      main.querySelector(".chart")?.replaceWith(publicationChart(fresh.history));
    } catch (error) {
      showMessage(message, describeError(error), "error");
    }
  };
  const tag = h("input", { id: "reprocess-tag", required: true });
  const dryRunArea = h("div", {}, h("p", { class: "muted" }, "Not listed yet."));
  const dryRunMessage = messageArea();
  dryRunMessage.id = "dry-run-message";
  main.replaceChildren(
    h("h1", {}, `${owner}/${name}`),
    h(
      "div",
      { class: "toolbar" },
      h(
        "button",
        { type: "button", onclick: () => run("Checking", `/monitor/check/${path}`) },
        "Check now",
      ),
      h(
        "button",
        {
          type: "button",
          onclick: () => run("Reprocessing the latest release", `/monitor/reprocess/${path}`),
        },
        "Reprocess latest",
      ),
      h(
        "form",
        {
          onsubmit: (event: Event) => {
            event.preventDefault();
            void run(
              `Reprocessing ${tag.value}`,
              `/monitor/reprocess/${path}/${encodeURIComponent(tag.value.trim())}`,
            );
          },
        },
        h("label", { for: "reprocess-tag" }, "Tag to reprocess"),
        tag,
        h("button", { type: "submit" }, "Reprocess tag"),
      ),
    ),
    message,
    h("h2", {}, "Bytes published and duration per release"),
    h(
      "p",
      { class: "muted" },
      "Per release: bytes written (left bar, left scale) and how long it took (right bar, right scale).",
    ),
    publicationChart(history),
    historyTable(history),
    h("h2", {}, "Dry run: what the code host holds"),
    h(
      "button",
      {
        type: "button",
        onclick: async () => {
          showMessage(dryRunMessage, "Listing…", "ok");
          try {
            const listing = await api<DryRun>(`/monitor/dry-run/${path}`);
            dryRunArea.replaceChildren(dryRunList(listing));
            showMessage(
              dryRunMessage,
              `${listing.total_releases} release(s) on the code host`,
              "ok",
            );
          } catch (error) {
            showMessage(dryRunMessage, describeError(error), "error");
          }
        },
      },
      "List releases (dry run)",
    ),
    dryRunMessage,
    dryRunArea,
  );
}
