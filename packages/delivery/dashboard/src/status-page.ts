import { api } from "./api.js";
import { formatTime, h, messageArea } from "./dom.js";
import { withKey } from "./key-panel.js";
import type { Notification, Status } from "./wire.js";

const READ_ITEM = "delivery.readNotifications";

/** Ids of the notifications read in this browser (the service keeps no read state). */
function readIds(): Set<number> {
  return new Set(JSON.parse(localStorage.getItem(READ_ITEM) ?? "[]") as number[]);
}

const yesNo = (ok: boolean) =>
  h("span", { class: ok ? "status success" : "status failed" }, ok ? "up" : "down");

function definitionList(entries: Array<[string, Node | string]>): HTMLDListElement {
  return h(
    "dl",
    {},
    ...entries.flatMap(([term, value]) => [h("dt", {}, term), h("dd", {}, value)]),
  );
}

/** Status of the service, and the notifications with their read state. */
export async function statusPage(main: HTMLElement): Promise<void> {
  const [status, { notifications }] = await Promise.all([
    api<Status>("/monitor/status"),
    api<{ notifications: Notification[] }>("/monitor/notifications?limit=50"),
  ]);
  const rate = status.codehost_rate_limit;
  const read = readIds();
  const list = h("ul", { id: "notifications" });
  const draw = () =>
    list.replaceChildren(
      ...notifications.map((notification) => {
        const isRead = read.has(notification.id);
        return h(
          "li",
          { class: isRead ? "read" : "unread" },
          h("strong", {}, isRead ? "" : "New: "),
          `${formatTime(notification.created_at)} ${notification.message}`,
          notification.delivered ? "" : " (not delivered to Telegram)",
          " ",
          h(
            "button",
            {
              type: "button",
              "aria-label": `${isRead ? "Mark unread" : "Mark read"}: ${notification.repository} ${notification.tag}`,
              onclick: () => {
                if (isRead) read.delete(notification.id);
                else read.add(notification.id);
                localStorage.setItem(READ_ITEM, JSON.stringify([...read]));
                draw();
              },
            },
            isRead ? "Mark unread" : "Mark read",
          ),
        );
      }),
    );
  draw();
  const telegram = messageArea();
  main.replaceChildren(
    h("h1", {}, "Status"),
    definitionList([
      ["Version", status.version],
      ["Repositories", `${status.repositories.active} active of ${status.repositories.total}`],
      ["Releases in the last 24 h", String(status.releases_last_24h)],
      [
        "Code host rate limit",
        rate.remaining === null
          ? "unknown"
          : `${rate.remaining} of ${rate.limit} left, reset at ${rate.reset === null ? "unknown" : new Date(rate.reset * 1000).toLocaleString()}`,
      ],
      [`Database (${status.services.database})`, yesNo(status.services.mysql)],
      ["Object store", yesNo(status.services.objectstore)],
      [
        "Scheduler",
        status.scheduler.running
          ? `running, a round every ${status.scheduler.interval_minutes} min`
          : "off",
      ],
      [
        "Next scheduler round",
        h(
          "span",
          { id: "next-round" },
          status.scheduler.next_round_at === null
            ? "none (the scheduler is off)"
            : formatTime(status.scheduler.next_round_at),
        ),
      ],
    ]),
    h("h2", {}, `Notifications (${notifications.filter((n) => !read.has(n.id)).length} unread)`),
    list,
    h(
      "button",
      {
        type: "button",
        onclick: () =>
          withKey("Sending the Telegram test", telegram, async () => {
            await api("/monitor/telegram/test", { method: "POST", withKey: true });
            return "The Telegram test message went through";
          }),
      },
      "Send the Telegram test",
    ),
    telegram,
  );
}
