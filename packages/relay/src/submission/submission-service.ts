import { type Clock, epochSeconds } from "@rd/common";
import type { ConfigStore } from "../config/config-store.js";
import type { DomainConfig } from "../config/schema.js";
import type { DkimSigner } from "../dkim/dkim-signer.js";
import { Errors } from "../errors.js";
import type { Ledger } from "../ledger/ledger.js";
import { NO_MESSAGE_ID } from "../ledger/ledger-events.js";
import type { MessageParts } from "../mime/message-parts.js";
import type { DeliveryResult } from "../outbound/outbound.js";
import type { ClientRecord } from "../state/client-repository.js";
import type { NewQueueEntry, QueueStore } from "../state/queue-repository.js";
import { type SuppressionList, suppressedResult } from "../suppressions/suppression-list.js";
import {
  composeMessage,
  contentBytes,
  uniqueRecipients,
  validateSendFields,
} from "./compose-message.js";
import type { DomainQuota } from "./domain-quota.js";
import { parseMailbox } from "./mailbox.js";
import type { MessageDispatch } from "./message-dispatch.js";
import { createMessageId } from "./message-id.js";
import { prepareRawMessage } from "./raw-message.js";
import type { SendFields } from "./send-request.js";

/** A ready message submitted with its envelope (`/send-raw`, and the SMTP submission port). */
export interface RawSubmission {
  /** Envelope sender: defines the domain and its DKIM kit. */
  readonly from: string;
  /** Envelope recipients, one delivery each. */
  readonly to: readonly string[];
  /** The complete RFC 5322 message. */
  readonly raw: Buffer | string;
}

/** Where a submission comes from. */
export interface SubmissionOrigin {
  /** The HTTP request that carries it: its log lines carry the id (README, "Request ids"). */
  readonly requestId?: string;
}

/** How `submitRaw` takes a message. */
export interface RawSubmissionOrigin extends SubmissionOrigin {
  /**
   * Replaces the service's own dispatch for this message: the SMTP port's, which has the
   * message in the queue before it answers.
   */
  readonly dispatch?: MessageDispatch;
}

/** The answer to an accepted submission. */
export interface SubmissionOutcome {
  readonly messageId: string;
  /** `async` when the message was queued (HTTP 202) rather than delivered (HTTP 200). */
  readonly mode: "sync" | "async";
  readonly results: DeliveryResult[];
}

/**
 * The submission pipeline shared by HTTP and SMTP, in order: envelope → authorization (the
 * client's domain list, then the domain's configuration) → build or normalise the MIME →
 * `received` → quota → DKIM sign (`signed`) → delivery or queue.
 * The credential itself is checked by the transport before it calls in.
 */
export interface SubmissionService {
  /**
   * `POST /send`. `client` is undefined only on an open instance (no `RELAY_AUTH_TOKEN`),
   * which may then send for any configured active domain.
   */
  submitFields(
    client: ClientRecord | undefined,
    fields: SendFields,
    origin?: SubmissionOrigin,
  ): Promise<SubmissionOutcome>;
  /** `POST /send-raw` and SMTP: a client always. */
  submitRaw(
    client: ClientRecord,
    submission: RawSubmission,
    origin?: RawSubmissionOrigin,
  ): Promise<SubmissionOutcome>;
  /**
   * The envelope checks `submitRaw` starts with (address, the client's list, then the domain's
   * configuration), for a transport that refuses before the message arrives (SMTP MAIL FROM).
   */
  authorizeSender(client: ClientRecord, from: string): void;
  /**
   * The reason `rcpt` is on the client's suppression list (a `suppressed` event without a
   * message yet), or undefined: for a transport that refuses a recipient on its own (SMTP RCPT TO).
   */
  suppressionOf(client: ClientRecord, rcpt: string): Promise<string | undefined>;
}

export interface SubmissionDeps {
  config: ConfigStore;
  clock: Clock;
  ledger: Ledger;
  signer: DkimSigner;
  quota: DomainQuota;
  /** Recipients the sending client no longer sends to: skipped, not counted. */
  suppressions: SuppressionList;
  /** Where a suppressed recipient is recorded, so that `GET /messages` and `GET /queue` show it. */
  queue: Pick<QueueStore, "insert" | "markFailed">;
  /** Where accepted messages go unless a transport passes its own (see `submitRaw`). */
  dispatch: MessageDispatch;
}

const refusedMessageIds = new WeakMap<object, string>();

/**
 * The `message_id` a refused submission had reached (for the `rejected` event), or `-` when it
 * was refused before a message existed.
 */
export function messageIdOfRefusal(error: unknown): string {
  return (
    (typeof error === "object" && error !== null && refusedMessageIds.get(error)) || NO_MESSAGE_ID
  );
}

export function createSubmissionService(deps: SubmissionDeps): SubmissionService {
  // Keys of removed domains leave memory; a key path no longer configured is read afresh if it
  // ever comes back, so a removed-and-recreated domain never signs with a stale key.
  deps.config.onChange((config) => {
    deps.signer.retain(Object.values(config.domains).map((domain) => domain.key_path));
  });

  /**
   * Authorization in the decided order: the client's list first, so the answer does not tell
   * which domains exist; then the configuration (unknown → no_dkim_kit, pending → 403).
   */
  function authorize(client: ClientRecord | undefined, domain: string): DomainConfig {
    if (client && !client.domains.some((allowed) => allowed.toLowerCase() === domain)) {
      throw Errors.domainNotAllowed(`this client may not send for ${domain}`);
    }
    const config = deps.config.current().domains[domain];
    if (!config) throw Errors.noDkimKit(`${domain} has no DKIM kit on this relay`);
    if (config.status !== "active") throw Errors.domainPending();
    return config;
  }

  /** From the accepted message on: quota, signature, delivery. */
  async function accept(
    client: ClientRecord | undefined,
    envelope: { from: string; domain: string; recipients: readonly string[] },
    domainConfig: DomainConfig,
    built: {
      messageId: string;
      message: Buffer | MessageParts;
      subjectLength: number;
      bodyBytes: number;
      /** `/send`'s tags and metadata: on the `received` line when given, and the queue rows. */
      labels?: { tags?: readonly string[]; metadata?: Readonly<Record<string, string>> };
    },
    dispatch: MessageDispatch,
    requestId: string | undefined,
  ): Promise<SubmissionOutcome> {
    const { messageId } = built;
    try {
      deps.ledger.emit(
        {
          event: "received",
          message_id: messageId,
          from: envelope.from,
          from_domain: envelope.domain,
          rcpt_count: envelope.recipients.length,
          subject_len: built.subjectLength,
          body_bytes: built.bodyBytes,
          ...built.labels,
        },
        requestId,
      );
      const suppressed = await deps.suppressions.screen(
        client?.client_id,
        messageId,
        envelope.recipients,
        requestId,
      );
      const recipients = envelope.recipients.filter((rcpt) => !suppressed.has(rcpt));
      await recordSuppressed(
        { messageId, client, from: envelope.from, labels: built.labels },
        suppressed,
      );
      // Suppressed recipients keep their place in the answer, each with its reason.
      const answer = (sent: readonly DeliveryResult[]) => {
        let next = 0;
        return envelope.recipients.map((rcpt) => {
          const reason = suppressed.get(rcpt);
          return reason === undefined
            ? (sent[next++] as DeliveryResult)
            : suppressedResult(rcpt, reason);
        });
      };
      // Every recipient suppressed: nothing is counted, signed or sent, and the answer is final
      // (200, not a 202 that would promise a delivery).
      if (recipients.length === 0) return { messageId, mode: "sync", results: answer([]) };
      const limits = domainConfig.limits ?? deps.config.current().default_domain_limits;
      const refund = await deps.quota.consume(envelope.domain, recipients.length, limits);
      // Recipients count once accepted: a message that cannot be signed or queued gives its
      // share back, so a refused request never uses up the quota.
      try {
        const { selector } = domainConfig;
        const signed = await deps.signer.sign(built.message, {
          domain: envelope.domain,
          selector,
          keyPath: domainConfig.key_path,
        });
        deps.ledger.emit(
          { event: "signed", message_id: messageId, domain: envelope.domain, selector },
          requestId,
        );
        const results = await dispatch.send({
          messageId,
          clientId: client?.client_id,
          envelopeFrom: envelope.from,
          domain: envelope.domain,
          recipients,
          message: signed,
          labels: built.labels,
          requestId,
        });
        return { messageId, mode: dispatch.mode, results: answer(results) };
      } catch (error) {
        refund();
        throw error;
      }
    } catch (error) {
      if (typeof error === "object" && error !== null) refusedMessageIds.set(error, messageId);
      throw error;
    }
  }

  /**
   * A suppressed recipient gets a row like any other, `failed` at once with its reason and no
   * attempt: the message's status shows every recipient it was addressed to.
   */
  async function recordSuppressed(
    message: {
      messageId: string;
      client: ClientRecord | undefined;
      from: string;
      labels: NewQueueEntry["labels"];
    },
    suppressed: ReadonlyMap<string, string>,
  ): Promise<void> {
    if (suppressed.size === 0) return;
    const now = epochSeconds(deps.clock);
    const reasons = [...suppressed];
    const pks = await deps.queue.insert(
      reasons.map(([rcpt]) => ({
        message_id: message.messageId,
        client_id: message.client?.client_id ?? null,
        envelope_from: message.from,
        rcpt,
        estado: "sending" as const,
        next_attempt_at: now,
        labels: message.labels,
      })),
      now,
    );
    for (const [index, [to, reason]] of reasons.entries()) {
      const lastError = suppressedResult(to, reason).detail;
      await deps.queue.markFailed(pks[index] as number, { attempts: 0, lastError, now });
    }
  }

  function envelopeSender(value: string) {
    const from = parseMailbox(value);
    if (!from) throw Errors.badFrom("from must be the envelope sender address, a@domain");
    return from;
  }

  return {
    async submitFields(client, fields, origin) {
      const send = validateSendFields(fields);
      const domainConfig = authorize(client, send.from.domain);
      const messageId = createMessageId(send.from.domain);
      const message = await composeMessage(send, { messageId, date: deps.clock.now() });
      const recipients = send.recipients.map((mailbox) => mailbox.address);
      return accept(
        client,
        { from: send.from.address, domain: send.from.domain, recipients },
        domainConfig,
        {
          messageId,
          message,
          subjectLength: send.subject.length,
          bodyBytes: contentBytes(send),
          labels: {
            ...(send.tags && { tags: send.tags }),
            ...(send.metadata && { metadata: send.metadata }),
          },
        },
        deps.dispatch,
        origin?.requestId,
      );
    },

    authorizeSender(client, from) {
      authorize(client, envelopeSender(from).domain);
    },

    async suppressionOf(client, rcpt) {
      return (await deps.suppressions.screen(client.client_id, NO_MESSAGE_ID, [rcpt])).get(rcpt);
    },

    async submitRaw(client, submission, origin) {
      const from = envelopeSender(submission.from);
      const recipients = uniqueRecipients(submission.to).map((mailbox) => mailbox.address);
      const domainConfig = authorize(client, from.domain);
      const prepared = prepareRawMessage(submission.raw, {
        envelopeDomain: from.domain,
        newMessageId: () => createMessageId(from.domain),
        now: deps.clock.now(),
      });
      return accept(
        client,
        { from: from.address, domain: from.domain, recipients },
        domainConfig,
        prepared,
        origin?.dispatch ?? deps.dispatch,
        origin?.requestId,
      );
    },
  };
}
