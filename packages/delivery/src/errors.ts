import { defineError } from "@rd/common";

// The delivery's domain errors, each code defined once. Services throw them; http/ maps them
// to the wire (`{error: message}` with the status). This module is a leaf: it imports only
// @rd/common, so every layer may throw from it.

// ---- Code host ----

/** The code host failed or refused a request the service needed (network, 5xx, bad token, rate limit). */
export const CodeHostUnavailable = defineError(
  "codehost_unavailable",
  502,
  "The code host did not answer the request",
);

// ---- Webhooks on the code host ----

/** The code host already has a webhook delivering to this service's URL. */
export const WebhookExists = defineError(
  "webhook_exists",
  409,
  "A webhook delivering to this service already exists",
);
/** The code host refused the webhook's configuration (e.g. a URL it cannot reach). */
export const WebhookRejected = defineError(
  "webhook_rejected",
  422,
  "The code host refused the webhook",
);
