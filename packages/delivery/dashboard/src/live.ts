import { refreshSession } from "./api.js";
import { formatBytes, h } from "./dom.js";

// Live publications from `GET /monitor/events` (Server-Sent Events): a progress bar per file
// and one for the release (bytes written of bytes expected), then the result.

interface PlannedFile {
  readonly file: string;
  readonly expected_bytes: number;
}

type MonitorEvent =
  | {
      type: "release_started";
      repository: string;
      tag: string;
      files: PlannedFile[];
      expected_bytes: number;
    }
  | {
      type: "file_progress";
      repository: string;
      tag: string;
      file: string;
      bytes: number;
      expected_bytes: number | null;
      release_bytes: number;
      done: boolean;
    }
  | {
      type: "release_finished";
      repository: string;
      tag: string;
      status: string;
      trigger: string;
      files_count: number;
      total_bytes: number;
      errors: string[];
    }
  | { type: "scheduler_round"; outcome: string; at: string };

interface Card {
  readonly element: HTMLElement;
  readonly release: HTMLProgressElement;
  readonly releaseText: HTMLElement;
  readonly files: HTMLElement;
  readonly fileBars: Map<string, { bar: HTMLProgressElement; text: HTMLElement }>;
  expected: number;
}

/** Finished releases kept in view. */
const KEEP_FINISHED = 5;
/** Wait before reconnecting a stream the service closed. */
const RECONNECT_MS = 3_000;

function bar(label: string, max: number): HTMLProgressElement {
  return h("progress", { max: Math.max(max, 1), value: 0, "aria-label": label });
}

/** The live panel and its event stream; `stop` closes the stream (sign-out). */
export function livePanel(): { element: HTMLElement; stop(): void } {
  const list = h("ul", { class: "live-list" });
  const empty = h("p", { class: "muted" }, "No publication running.");
  const scheduler = h("p", { class: "muted" }, "No scheduler round seen yet.");
  const element = h(
    "section",
    { id: "live", "aria-labelledby": "live-heading" },
    h("h2", { id: "live-heading" }, "Live publications"),
    empty,
    list,
    scheduler,
  );
  const cards = new Map<string, Card>();

  const cardOf = (repository: string, tag: string, expected: number): Card => {
    const key = `${repository}#${tag}`;
    const existing = cards.get(key);
    if (existing) return existing;
    const name = `${repository} ${tag}`;
    const release = bar(`${name}: release progress`, expected);
    const releaseText = h("span", { class: "bytes" });
    const files = h("ul", { class: "files" });
    const card: Card = {
      element: h(
        "li",
        { class: "live-card", "data-release": key },
        h("h3", {}, name),
        h("div", { class: "bar-row" }, release, releaseText),
        files,
      ),
      release,
      releaseText,
      files,
      fileBars: new Map(),
      expected,
    };
    cards.set(key, card);
    list.prepend(card.element);
    empty.hidden = true;
    return card;
  };

  const fileBar = (card: Card, file: string, expected: number) => {
    const existing = card.fileBars.get(file);
    if (existing) return existing;
    const text = h("span", { class: "bytes" });
    const entry = { bar: bar(`${file}: file progress`, expected), text };
    card.fileBars.set(file, entry);
    card.files.append(h("li", {}, h("span", { class: "file" }, file), entry.bar, text));
    return entry;
  };

  const handle = (event: MonitorEvent) => {
    if (event.type === "scheduler_round") {
      scheduler.textContent = `Last scheduler round: ${event.outcome} at ${new Date(event.at).toLocaleTimeString()}`;
      return;
    }
    if (event.type === "release_started") {
      // A release published again (reprocess) gets a card of its own below the finished one.
      const key = `${event.repository}#${event.tag}`;
      if (cards.get(key)?.element.dataset.status) cards.delete(key);
      const card = cardOf(event.repository, event.tag, event.expected_bytes);
      card.expected = event.expected_bytes;
      card.release.max = Math.max(event.expected_bytes, 1);
      card.releaseText.textContent = `0 of ${formatBytes(event.expected_bytes)}`;
      for (const file of event.files) {
        fileBar(card, file.file, file.expected_bytes).text.textContent =
          `0 of ${formatBytes(file.expected_bytes)}`;
      }
      return;
    }
    if (event.type === "file_progress") {
      const card = cardOf(event.repository, event.tag, event.expected_bytes ?? 0);
      const expected = event.expected_bytes ?? event.bytes;
      const entry = fileBar(card, event.file, expected);
      entry.bar.max = Math.max(expected, 1);
      entry.bar.value = event.bytes;
      entry.text.textContent = `${formatBytes(event.bytes)} of ${formatBytes(expected)}`;
      card.release.value = Math.min(event.release_bytes, card.release.max);
      card.releaseText.textContent = `${formatBytes(event.release_bytes)} of ${formatBytes(card.expected)}`;
      return;
    }
    const card = cardOf(event.repository, event.tag, event.total_bytes);
    card.release.value = card.release.max;
    card.element.dataset.status = event.status;
    const errors = event.errors.length > 0 ? `: ${event.errors.join("; ")}` : "";
    card.element.append(
      h(
        "p",
        { class: `result ${event.status}`, role: "status" },
        `${event.status} (${event.trigger}): ${event.files_count} file(s), ${formatBytes(event.total_bytes)}${errors}`,
      ),
    );
    const finished = [...list.querySelectorAll("li.live-card[data-status]")];
    for (const old of finished.slice(KEEP_FINISHED)) {
      const key = old.getAttribute("data-release") ?? "";
      if (cards.get(key)?.element === old) cards.delete(key);
      old.remove();
    }
  };

  let source: EventSource | null = null;
  let stopped = false;
  const connect = () => {
    if (stopped) return;
    source = new EventSource("/monitor/events");
    for (const type of [
      "release_started",
      "file_progress",
      "release_finished",
      "scheduler_round",
    ]) {
      source.addEventListener(type, (message) =>
        handle(JSON.parse((message as MessageEvent<string>).data) as MonitorEvent),
      );
    }
    source.addEventListener("open", () => element.setAttribute("data-connected", "true"));
    source.addEventListener("error", () => {
      element.removeAttribute("data-connected");
      // A closed stream (401 after the access token expired, a restart) is reopened after a
      // refresh; a stream that merely dropped is reconnected by the browser itself.
      if (source?.readyState !== EventSource.CLOSED) return;
      setTimeout(() => void refreshSession().then(connect), RECONNECT_MS);
    });
  };
  connect();
  return {
    element,
    stop() {
      stopped = true;
      source?.close();
    },
  };
}
