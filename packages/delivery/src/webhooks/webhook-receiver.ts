import { defineError, type Logger } from "@rd/common";
import type { WatchedRepository } from "../repositories/repo-repository.js";
import { DeliveryDeduplicator } from "./delivery-deduplicator.js";
import { parsePayload, readReleaseEvent } from "./release-event.js";
import { hasValidSignature } from "./webhook-signature.js";

export const InvalidSignature = defineError("invalid_signature", 401, "Invalid signature");
export const RepositoryNotRegistered = defineError(
  "repository_not_registered",
  404,
  "Repository is not registered in the database",
);

/**
 * Release actions that mean a release is out. One publication fires several of them; the
 * deduplication below and the processor's claim make it one processing.
 */
export const RELEASE_ACTIONS: ReadonlySet<string> = new Set(["published", "released", "created"]);

/** One delivery as it arrived: headers and the raw body bytes (the signature covers them). */
export interface WebhookDelivery {
  readonly event: string | undefined;
  readonly deliveryId: string | undefined;
  readonly signature: string | string[] | undefined;
  readonly body: Buffer;
}

/** The 200 answers of the receiver (errors are thrown). */
export type WebhookAnswer =
  | { success: true; message: "pong" }
  | { success: true; ignored: true; reason: string }
  | { success: true; result: object };

/** What processing a release for the webhook gave. */
export type ReleaseProcessing =
  /** `in_progress`: another instance holds the release's claim and is publishing it. */
  | { readonly kind: "already_processed" | "in_progress" }
  /** `processed`: the release ended `success` or `partial` (a `failed` one is retried later). */
  | { readonly kind: "processed"; readonly processed: boolean; readonly result: object };

export interface WebhookReceiverDeps {
  /** `HOSTING_WEBHOOK_SECRET`; undefined refuses every delivery. */
  readonly secret: string | undefined;
  readonly repos: { findByName(owner: string, name: string): Promise<WatchedRepository | null> };
  /** The processing entry point shared with `POST /monitor/check`, with trigger `webhook`. */
  readonly processRelease: (
    repository: WatchedRepository,
    tag: string,
  ) => Promise<ReleaseProcessing>;
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
    if (delivery.event !== "release")
      return ignored(`event ${delivery.event ?? "(none)"} is not handled`);

    const event = readReleaseEvent(payload);
    if (!RELEASE_ACTIONS.has(event.action))
      return ignored(`release action ${event.action} is not handled`);
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
        const processing = await this.deps.processRelease(repository, event.tag);
        if (processing.kind !== "processed") {
          // Processed before: nothing to do. In progress elsewhere: that instance answers for it.
          const done = processing.kind === "already_processed";
          return { processed: done, value: ignored(processing.kind) };
        }
        return {
          processed: processing.processed,
          value: { success: true, result: processing.result } as WebhookAnswer,
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
