import { randomBytes } from "node:crypto";
import type { Clock } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import { Errors } from "../errors.js";
import type { WebhookEndpointRow, WebhookStore } from "../state/webhook-repository.js";
import { WEBHOOK_EVENT_TYPES } from "./webhook-events.js";

/** Longest endpoint URL accepted. */
const MAX_URL_LENGTH = 2048;

export const WebhookEventTypeSchema = Type.Union(
  WEBHOOK_EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: WEBHOOK_EVENT_TYPES.join(" | ") },
);

/** `POST /webhooks`. */
export const NewWebhookSchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: "http or https" }),
    events: Type.Array(WebhookEventTypeSchema, {
      minItems: 1,
      maxItems: WEBHOOK_EVENT_TYPES.length,
      uniqueItems: true,
    }),
  },
  { additionalProperties: false },
);

const WebhookEndpointSchema = Type.Object({
  id: Type.String({ pattern: "^wh_[0-9a-f]{24}$" }),
  url: Type.String(),
  events: Type.Array(WebhookEventTypeSchema),
  created_at: Type.String({ format: "date-time" }),
});

export const WebhookAttemptSchema = Type.Object({
  event_id: Type.String(),
  event_type: WebhookEventTypeSchema,
  attempt: Type.Integer({ description: "1 for the first try of this event" }),
  at: Type.String({ format: "date-time" }),
  status: Type.Union([Type.Integer(), Type.Null()], {
    description: "HTTP status answered; null when none came (timeout, connection refused)",
  }),
  latency_ms: Type.Integer(),
  error: Type.Union([Type.String(), Type.Null()]),
  outcome: Type.Union(
    [Type.Literal("delivered"), Type.Literal("retrying"), Type.Literal("gave_up")],
    { description: "gave_up: the last try, 24 hours after the event" },
  ),
});

/** An endpoint as the API shows it after its creation: never its secret. */
export const WebhookViewSchema = Type.Composite([
  WebhookEndpointSchema,
  Type.Object({
    pending: Type.Integer({ description: "events of this endpoint still in the outbox" }),
    recent_attempts: Type.Array(WebhookAttemptSchema, { description: "newest first, at most 20" }),
  }),
]);
export type WebhookView = Static<typeof WebhookViewSchema>;

/** `POST /webhooks`' answer: the only one that shows the secret. */
export const CreatedWebhookSchema = Type.Composite([
  WebhookEndpointSchema,
  Type.Object({
    secret: Type.String({ description: "HMAC-SHA256 key of X-Relay-Signature; shown only here" }),
  }),
]);
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>;

export interface WebhookService {
  create(input: Static<typeof NewWebhookSchema>): Promise<CreatedWebhook>;
  list(): Promise<WebhookView[]>;
  get(id: string): Promise<WebhookView>;
  remove(id: string): Promise<void>;
}

/** An absolute http or https URL, else `bad_request`. */
function checkUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw Errors.badRequest(`${JSON.stringify(text)} is not an absolute URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw Errors.badRequest(`the URL's scheme must be http or https, not ${url.protocol}`);
  }
  return url.href;
}

/** Registration of webhook endpoints (admin). */
export function createWebhookService(deps: { store: WebhookStore; clock: Clock }): WebhookService {
  const { store } = deps;

  async function view(endpoint: WebhookEndpointRow): Promise<WebhookView> {
    const { secret: _secret, ...shown } = endpoint;
    return {
      ...(shown as Omit<WebhookView, "pending" | "recent_attempts">),
      pending: await store.pendingCount(endpoint.id),
      recent_attempts: (await store.recentAttempts(endpoint.id)) as WebhookView["recent_attempts"],
    };
  }

  return {
    async create({ url, events }) {
      const endpoint: WebhookEndpointRow = {
        id: `wh_${randomBytes(12).toString("hex")}`,
        url: checkUrl(url),
        events: [...events],
        secret: `whsec_${randomBytes(24).toString("base64url")}`,
        created_at: deps.clock.now().toISOString(),
      };
      await store.addEndpoint(endpoint);
      return endpoint as CreatedWebhook;
    },
    async list() {
      return Promise.all((await store.endpoints()).map(view));
    },
    async get(id) {
      const endpoint = (await store.endpoints()).find((candidate) => candidate.id === id);
      if (!endpoint) throw Errors.notFound(`no webhook endpoint ${id}`);
      return view(endpoint);
    },
    async remove(id) {
      if (!(await store.removeEndpoint(id))) throw Errors.notFound(`no webhook endpoint ${id}`);
    },
  };
}
