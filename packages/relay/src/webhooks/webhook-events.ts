import { randomBytes } from "node:crypto";
import type { LedgerEvent } from "../ledger/ledger-events.js";
import { NO_MESSAGE_ID } from "../ledger/ledger-events.js";
import type { NewWebhookEvent } from "../state/webhook-repository.js";
import { WEBHOOK_GIVE_UP_AFTER_MS } from "./webhook-retry.js";

/** The ledger events an endpoint can subscribe to: one per recipient outcome (and refusals). */
export const WEBHOOK_EVENT_TYPES = [
  "delivered",
  "deferred",
  "failed",
  "suppressed",
  "rejected",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function isWebhookEventType(type: string): type is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(type);
}

/** What the queue rows say of a message: its sending client and its `/send` labels. */
export interface MessageOwner {
  readonly client_id: string | null;
  readonly labels: MessageLabels;
}

/** The sender's labels of a message (`/send` tags and metadata). */
export interface MessageLabels {
  readonly tags: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
}

/** A ledger event, with its message's labels when the emitter knew them (see webhook-outbox.ts). */
export type LabelledEvent = LedgerEvent & Partial<MessageLabels>;

/**
 * The JSON body POSTed for one ledger event: `id` (one per event, the same for every
 * endpoint), `type`, `timestamp`, `message_id` (null for a refusal before any message),
 * `rcpt`, `client_id`, `tags`, `metadata`, then the event's own fields as the ledger has them
 * (`smtp_response` for `delivered`, `error` for `deferred` and `failed`, `reason` for
 * `suppressed` and `rejected`, …). The body is fixed at emission: every retry sends these bytes.
 */
export function webhookBody(
  event: LabelledEvent,
  owner: MessageOwner | undefined,
  timestamp: Date,
  id: string,
): string {
  // What the event carries wins (`suppressed` has its client); the rest comes from the queue rows.
  const {
    event: type,
    message_id,
    rcpt,
    client_id,
    tags,
    metadata,
    ...details
  } = event as LabelledEvent & { rcpt?: string; client_id?: string | null };
  return JSON.stringify({
    id,
    type,
    timestamp: timestamp.toISOString(),
    message_id: message_id === NO_MESSAGE_ID ? null : message_id,
    rcpt: rcpt ?? null,
    client_id: client_id ?? owner?.client_id ?? null,
    tags: tags ?? owner?.labels.tags ?? [],
    metadata: metadata ?? owner?.labels.metadata ?? {},
    ...details,
  });
}

/** The outbox rows' content for one event emitted at `at` (epoch ms), tried until 24 h later. */
export function outboxEvent(
  event: LabelledEvent,
  owner: MessageOwner | undefined,
  id: string,
  at: number,
): NewWebhookEvent {
  return {
    event_id: id,
    event_type: event.event,
    body: webhookBody(event, owner, new Date(at), id),
    now: at,
    expires_at: at + WEBHOOK_GIVE_UP_AFTER_MS,
  };
}

/** A new event's `id`: the receivers' deduplication key. */
export function newEventId(): string {
  return `evt_${randomBytes(12).toString("hex")}`;
}
