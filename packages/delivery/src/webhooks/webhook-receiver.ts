import type { Logger } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import { InvalidSignature, RepositoryNotRegistered } from "../errors.js";
import type { ProcessingTrigger } from "../releases/history-repository.js";
import { type Processing, ReleaseResult } from "../releases/release-result.js";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import { DeliveryDeduplicator } from "./delivery-deduplicator.js";
import { parsePayload, readReleaseEvent } from "./release-event.js";
import { hasValidSignature } from "./webhook-signature.js";

/**
 * Release actions that mean a release is out. One publication fires several of them; the
 * deduplication below and the processor's claim make it one processing.
 */
const RELEASE_ACTIONS: ReadonlySet<string> = new Set(["published", "released", "created"]);

/** One delivery as it arrived: headers and the raw body bytes (the signature covers them). */
export interface WebhookDelivery {
  readonly event: string | undefined;
  readonly deliveryId: string | undefined;
  readonly signature: string | string[] | undefined;
  readonly body: Buffer;
}

/**
 * The 200 answers of the receiver (errors are thrown): `{message: "pong"}`, `{ignored, reason}`
 * or `{result}`, each with `success: true`.
 */
export const WebhookAnswer = Type.Object({
  success: Type.Literal(true),
  message: Type.Optional(Type.String()),
  ignored: Type.Optional(Type.Literal(true)),
  reason: Type.Optional(Type.String()),
  result: Type.Optional(ReleaseResult),
});
export type WebhookAnswer = Static<typeof WebhookAnswer>;

export interface WebhookReceiverDeps {
  /** `HOSTING_WEBHOOK_SECRET`; undefined refuses every delivery. */
  readonly secret: string | undefined;
  readonly repos: { findByName(owner: string, name: string): Promise<WatchedRepository | null> };
  /** The same processing as `POST /monitor/check`, for the tag of the event. */
  readonly releases: {
    checkTag(
      repository: WatchedRepository,
      tag: string,
      trigger: ProcessingTrigger,
    ): Promise<Processing>;
  };
  readonly logger: Logger;
}

const ignored = (reason: string): WebhookAnswer => ({ success: true, ignored: true, reason });

/** Turns a code-host delivery into an answer: authenticate, filter, then process once. */
export class WebhookReceiver {
  private readonly dedup = new DeliveryDeduplicator<WebhookAnswer>();

  constructor(private readonly deps: WebhookReceiverDeps) {}

  async receive(delivery: WebhookDelivery): Promise<WebhookAnswer> {
    const { logger } = this.deps;
    // The signature comes first: nothing of an unauthenticated body is even parsed.
    if (!hasValidSignature(this.deps.secret, delivery.body, delivery.signature)) {
      logger.warn("webhook delivery refused: invalid signature", {
        delivery: delivery.deliveryId,
        secret_configured: this.deps.secret !== undefined,
      });
      throw InvalidSignature();
    }
    const payload = parsePayload(delivery.body);
    if (delivery.event === "ping") return { success: true, message: "pong" };
    if (delivery.event !== "release") {
      return ignored(`event ${delivery.event ?? "(none)"} is not handled`);
    }

    const event = readReleaseEvent(payload);
    if (!RELEASE_ACTIONS.has(event.action)) {
      return ignored(`release action ${event.action} is not handled`);
    }
    const repository = await this.deps.repos.findByName(event.owner, event.name);
    if (!repository) {
      throw RepositoryNotRegistered(
        `Repository ${event.owner}/${event.name} is not registered in the database`,
      );
    }
    if (!repository.active) return ignored("repository_inactive");
    if (event.draft) return ignored("draft");

    const fields = {
      delivery: delivery.deliveryId,
      repository: repository.fullName,
      tag: event.tag,
    };
    const { outcome, joined } = await this.dedup.run(
      delivery.deliveryId,
      `${repository.id}:${event.tag}`,
      async () => {
        const check = await this.deps.releases.checkTag(repository, event.tag, "webhook");
        if (check.outcome !== "published") {
          // Processed before: nothing to do. In progress elsewhere: that instance answers for it.
          const done = check.outcome === "already_processed";
          return { processed: done, value: ignored(check.outcome) };
        }
        // A failed processing is not "processed": it is retried by the next delivery or round.
        return {
          processed: check.record.status !== "failed",
          value: { success: true, result: check.result } satisfies WebhookAnswer,
        };
      },
    );
    if (joined && outcome.processed) {
      logger.info("webhook delivery joined a processed release", {
        ...fields,
        action: event.action,
      });
      return ignored("already_processed");
    }
    logger.info("webhook delivery handled", { ...fields, action: event.action, joined });
    return outcome.value;
  }
}
