// A few lines of DOM building instead of a framework: every text goes through text nodes
// (never innerHTML), so nothing the service returns is ever parsed as markup.

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

function apply(element: Element, attributes: Attributes, children: Child[]): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

/** An HTML element: `h("button", { type: "button", onclick: go }, "Go")`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, attributes, children);
  return element;
}

/** An SVG element (charts). */
export function svg(tag: string, attributes: Attributes = {}, ...children: Child[]): SVGElement {
  const element = document.createElementNS("http://www.w3.org/2000/svg", tag);
  apply(element, attributes, children);
  return element;
}

/** Bytes for people: 1.5 MiB. */
export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

/** A publication's duration for people; "not measured" for records older than durations. */
export function formatDuration(ms: number | null): string {
  if (ms === null) return "not measured";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A timestamp for people, in the browser's time zone; "never" for null. */
export function formatTime(iso: string | null): string {
  return iso ? new Date(iso).toLocaleString() : "never";
}

/** A message area beside a control: errors are shown next to what failed. */
export function messageArea(): HTMLParagraphElement {
  return h("p", { class: "message", role: "status", "aria-live": "polite" });
}

export function showMessage(area: HTMLElement, text: string, kind: "error" | "ok"): void {
  area.textContent = text;
  area.dataset.kind = kind;
}
