import type { Clock, Logger } from "@rd/common";
import { messageOf, withRequest } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import { parseEmailAddress } from "../addresses/email-address.js";
import { Errors } from "../errors.js";
import type { LedgerEvent } from "../ledger/ledger-events.js";
import type { DeliveryResult, PermanentFailureHandler } from "../outbound/outbound.js";
import type { SuppressionRow, SuppressionStore } from "../state/suppression-repository.js";

/** `GET /suppressions` without `limit` returns this many entries. */
export const SUPPRESSION_LIST_DEFAULT_LIMIT = 100;
/** `limit` ceiling, as `GET /queue`'s `limite`: a larger value is taken as this one. */
export const SUPPRESSION_LIST_MAX_LIMIT = 500;
/** Longest reason kept: a remote answer can be a long multi-line reply. */
export const MAX_REASON_LENGTH = 1000;
/** Reason of an entry added by hand without one. */
export const MANUAL_REASON = "added manually";

export const SuppressionSchema = Type.Object({
  client_id: Type.Union([Type.String(), Type.Null()], {
    description: "the client whose sends skip the address; null: /send of an open instance",
  }),
  address: Type.String({ description: "lower case" }),
  reason: Type.String({ description: "the remote answer of the bounce, or the manual reason" }),
  source: Type.Union([Type.Literal("bounce"), Type.Literal("manual")]),
  created_at: Type.String({ description: "ISO 8601 UTC" }),
});
export type Suppression = Static<typeof SuppressionSchema>;

export const SuppressionPageSchema = Type.Object({
  suppressions: Type.Array(SuppressionSchema, { description: "newest first" }),
  next_cursor: Type.Union([Type.String(), Type.Null()], {
    description: "pass as `cursor` for the next page; null on the last page",
  }),
});
export type SuppressionPage = Static<typeof SuppressionPageSchema>;

const ClientIdField = Type.String({
  minLength: 1,
  description: "admin: the client to act for (a client may name only itself)",
});

export const SuppressionListQuerySchema = Type.Object(
  {
    client_id: Type.Optional(ClientIdField),
    limit: Type.Optional(
      Type.Integer({ minimum: 1, description: "default 100; above 500 is taken as 500" }),
    ),
    cursor: Type.Optional(
      Type.String({ pattern: "^[0-9]{1,15}$", description: "next_cursor of the previous page" }),
    ),
  },
  { additionalProperties: false },
);
export type SuppressionListQuery = Static<typeof SuppressionListQuerySchema>;

export const NewSuppressionSchema = Type.Object(
  {
    address: Type.String({ description: "a@domain" }),
    reason: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_REASON_LENGTH })),
    client_id: Type.Optional(ClientIdField),
  },
  { additionalProperties: false },
);
export type NewSuppressionBody = Static<typeof NewSuppressionSchema>;

/**
 * `DELETE /suppressions`: the address in the query, URL-encoded (a query has room for the longest
 * address percent-encoded, a path parameter does not).
 */
export const SuppressionTargetQuerySchema = Type.Object(
  { address: Type.String({ description: "a@domain" }), client_id: Type.Optional(ClientIdField) },
  { additionalProperties: false },
);

type SuppressedEvent = Extract<LedgerEvent, { event: "suppressed" }>;

export interface SuppressionListDeps {
  store: SuppressionStore;
  /** The ledger (`suppressed` events). */
  emit: (event: SuppressedEvent, requestId?: string) => void;
  /** Whether a client exists (an admin adding for a mistyped id is refused). */
  clientExists: (clientId: string) => boolean;
  clock: Clock;
  logger: Logger;
}

/**
 * Who calls the API: a client (its id) manages its own list only; the admin (undefined) sees
 * every list and names the client it acts for.
 */
export type SuppressionCaller = string | undefined;

/**
 * Per client, the recipients its sends skip: added by a permanent delivery failure (a 5xx,
 * null MX, NXDOMAIN) or by hand, removed by hand. Addresses are kept and compared in lower
 * case, local part included (as the relay already merges repeated recipients of one send).
 */
export interface SuppressionList {
  /**
   * The suppressed ones among a message's recipients, with their reasons; each gets a
   * `suppressed` ledger event. `clientId` undefined: `/send` of an open instance.
   */
  screen(
    clientId: string | undefined,
    messageId: string,
    recipients: readonly string[],
    requestId?: string,
  ): Promise<Map<string, string>>;
  /** A delivery failed permanently: suppresses the recipient for its client. Never throws. */
  recordBounce: PermanentFailureHandler;
  list(caller: SuppressionCaller, query: SuppressionListQuery): Promise<SuppressionPage>;
  /** `created` false: the address was already suppressed (the entry is unchanged). */
  add(
    caller: SuppressionCaller,
    body: NewSuppressionBody,
  ): Promise<{ suppression: Suppression; created: boolean }>;
  /** Throws `not_found` when the address is not suppressed for that client. */
  remove(caller: SuppressionCaller, address: string, clientId: string | undefined): Promise<void>;
}

/** The per-recipient result of a suppressed recipient: not attempted (`results[]` of a send). */
export const suppressedResult = (to: string, reason: string): DeliveryResult => ({
  to,
  ok: false,
  detail: `suppressed: ${reason}`,
});

/** The form addresses are kept and compared in. */
export const suppressionKey = (address: string) => address.toLowerCase();

function normalizeAddress(value: string): string {
  const parsed = parseEmailAddress(value);
  if (!parsed) {
    throw Errors.badAddress(`not an e-mail address (a@domain): ${JSON.stringify(value)}`);
  }
  return suppressionKey(parsed.address);
}

const toSuppression = ({ id: _id, ...row }: SuppressionRow): Suppression => row;

export function createSuppressionList(deps: SuppressionListDeps): SuppressionList {
  const { store } = deps;

  /**
   * The list a call acts on: a client's own (naming another client finds nothing, as if it
   * did not exist); for the admin the client named, else `fallback`.
   */
  function scope<T>(caller: SuppressionCaller, requested: string | undefined, fallback: T) {
    if (caller === undefined) return requested ?? fallback;
    if (requested !== undefined && requested !== caller) {
      throw Errors.notFound(`no client ${requested}`);
    }
    return caller;
  }

  return {
    async screen(clientId, messageId, recipients, requestId) {
      const suppressed = new Map<string, string>();
      if (recipients.length === 0) return suppressed;
      const rows = await store.find(clientId ?? null, recipients.map(suppressionKey));
      if (rows.length === 0) return suppressed;
      const reasons = new Map(rows.map((row) => [row.address, row.reason]));
      for (const rcpt of recipients) {
        const reason = reasons.get(suppressionKey(rcpt));
        if (reason === undefined) continue;
        suppressed.set(rcpt, reason);
        deps.emit(
          { event: "suppressed", message_id: messageId, rcpt, client_id: clientId ?? null, reason },
          requestId,
        );
      }
      return suppressed;
    },

    async recordBounce({ clientId, rcpt, reason, requestId }) {
      try {
        await store.add({
          client_id: clientId,
          address: suppressionKey(rcpt),
          reason: reason.slice(0, MAX_REASON_LENGTH),
          source: "bounce",
          created_at: deps.clock.now().toISOString(),
        });
      } catch (error) {
        // The failure itself is recorded on its queue row; a later send will simply be tried.
        deps.logger.warn(
          "suppression not recorded",
          withRequest({ rcpt, error: messageOf(error) }, requestId),
        );
      }
    },

    async list(caller, { client_id, limit, cursor }) {
      const count = Math.min(limit ?? SUPPRESSION_LIST_DEFAULT_LIMIT, SUPPRESSION_LIST_MAX_LIMIT);
      // One more than asked tells whether another page follows.
      const rows = await store.list({
        client_id: scope(caller, client_id, undefined),
        ...(cursor !== undefined && { before: Number(cursor) }),
        limit: count + 1,
      });
      const page = rows.slice(0, count);
      return {
        suppressions: page.map(toSuppression),
        next_cursor: rows.length > count ? String(page.at(-1)?.id) : null,
      };
    },

    async add(caller, body) {
      const clientId = scope<string | null>(caller, body.client_id, null);
      const address = normalizeAddress(body.address);
      if (clientId !== null && !deps.clientExists(clientId)) {
        throw Errors.notFound(`no client ${clientId}`);
      }
      const { row, created } = await store.add({
        client_id: clientId,
        address,
        reason: body.reason ?? MANUAL_REASON,
        source: "manual",
        created_at: deps.clock.now().toISOString(),
      });
      return { suppression: toSuppression(row), created };
    },

    async remove(caller, value, requested) {
      const clientId = scope<string | null>(caller, requested, null);
      if (!(await store.remove(clientId, normalizeAddress(value)))) {
        throw Errors.notFound(`${value} is not suppressed for this client`);
      }
    },
  };
}
