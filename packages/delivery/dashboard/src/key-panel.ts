import { apiKey, describeError, KeyNeeded } from "./api.js";
import { h, messageArea, showMessage } from "./dom.js";

const WHY =
  "Adding and deleting repositories, activating or deactivating them, installing the code " +
  "host's webhook and sending the Telegram test are reserved to the service's API key, not to " +
  "a signed-in session. The key is kept for this tab only (sessionStorage): closing the tab " +
  "forgets it; it is never stored in a cookie or in localStorage.";

let panel: HTMLElement | null = null;
let reasonLine: HTMLParagraphElement | null = null;

/** The API key panel: where the key is entered, and why it is needed. */
export function keyPanel(): HTMLElement {
  const input = h("input", {
    id: "api-key",
    type: "password",
    autocomplete: "off",
    "aria-describedby": "api-key-why",
  });
  const state = messageArea();
  const refresh = () =>
    showMessage(state, apiKey.get() ? "An API key is set for this tab." : "No API key set.", "ok");
  reasonLine = h("p", { class: "reason", role: "alert" });
  const form = h(
    "form",
    {
      onsubmit: (event: Event) => {
        event.preventDefault();
        if (input.value.trim() === "") return;
        apiKey.set(input.value.trim());
        input.value = "";
        reasonLine?.replaceChildren();
        refresh();
      },
    },
    h("label", { for: "api-key" }, "API key"),
    input,
    h("button", { type: "submit" }, "Keep for this tab"),
    h(
      "button",
      {
        type: "button",
        onclick: () => {
          apiKey.clear();
          refresh();
        },
      },
      "Forget",
    ),
  );
  refresh();
  panel = h(
    "section",
    { id: "key-panel", "aria-labelledby": "key-heading" },
    h("h2", { id: "key-heading" }, "API key"),
    reasonLine,
    h("p", { id: "api-key-why" }, WHY),
    form,
    state,
  );
  return panel;
}

/**
 * Runs an action reserved to the API key; without a key, the panel says which action needs it
 * and takes the focus. Failures are shown in `area`, beside the control that failed.
 */
export async function withKey(what: string, area: HTMLElement, action: () => Promise<string>) {
  try {
    showMessage(area, `${what}…`, "ok");
    showMessage(area, await action(), "ok");
  } catch (error) {
    if (!(error instanceof KeyNeeded)) return showMessage(area, describeError(error), "error");
    showMessage(area, `${what} needs the API key: enter it in the API key panel.`, "error");
    if (reasonLine) reasonLine.textContent = `“${what}” needs the API key.`;
    document.getElementById("api-key")?.focus();
  }
}
