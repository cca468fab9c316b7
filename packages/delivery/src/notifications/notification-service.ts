import type { Clock, Logger } from "@rd/common";
import { TelegramUnavailable } from "../errors.js";
import type { Notification, NotificationRepository } from "./notification-repository.js";
import { type ReleaseOutcome, releaseMessage } from "./release-message.js";
import type { MessageChannel } from "./telegram-client.js";

/** Cleanup without `older_than_days` removes notifications older than this (decisions). */
export const DEFAULT_RETENTION_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
const TEST_MESSAGE = "Test message from the release-delivery service: the channel works.";

/** Receives every recorded release outcome (the processor's notifier dependency). */
interface ReleaseNotifier {
  releaseRecorded(outcome: ReleaseOutcome): Promise<void>;
}

/**
 * Stores a notification for each release outcome and sends it to the messaging channel when one
 * is configured. The send runs in the background: a slow or broken channel never holds up
 * publishing, and its failure is only recorded (`delivered: false`).
 */
export class NotificationService implements ReleaseNotifier {
  private readonly sending = new Set<Promise<void>>();

  constructor(
    private readonly notifications: NotificationRepository,
    /** Null when Telegram is not configured. */
    private readonly channel: MessageChannel | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async releaseRecorded(outcome: ReleaseOutcome): Promise<void> {
    const { type, text } = releaseMessage(outcome);
    const stored = await this.notifications.add({
      type,
      repository: outcome.repository,
      tag: outcome.tag,
      message: text,
      created_at: this.clock.now().toISOString(),
    });
    if (this.channel) this.track(this.deliver(this.channel, stored));
  }

  list(limit: number): Promise<[Notification[], number]> {
    return Promise.all([this.notifications.list(limit), this.notifications.count()]);
  }

  cleanup(olderThanDays: number = DEFAULT_RETENTION_DAYS): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - olderThanDays * DAY_MS);
    return this.notifications.deleteCreatedBefore(cutoff);
  }

  remove(id: number): Promise<boolean> {
    return this.notifications.delete(id);
  }

  /** Sends a test message; throws `TelegramUnavailable` when not configured or refused. */
  async sendTest(): Promise<void> {
    if (!this.channel) {
      throw TelegramUnavailable(
        "Telegram is not configured (TELEGRAM_BOT_TOKEN, TELEGRAM_CHAT_ID)",
      );
    }
    await this.channel.send(TEST_MESSAGE);
  }

  /** Resolves once every background send has finished (shutdown waits for it). */
  async drain(): Promise<void> {
    while (this.sending.size > 0) await Promise.allSettled([...this.sending]);
  }

  private async deliver(channel: MessageChannel, notification: Notification): Promise<void> {
    try {
      await channel.send(notification.message);
    } catch {
      // The channel already logged why; the row stays `delivered: false`.
      return;
    }
    try {
      await this.notifications.setDelivered(notification.id, true);
    } catch (error) {
      this.logger.warn("notification delivered but not marked", {
        id: notification.id,
        error: (error as Error).message,
      });
    }
  }

  private track(work: Promise<void>): void {
    this.sending.add(work);
    void work.finally(() => this.sending.delete(work));
  }
}
