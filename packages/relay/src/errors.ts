import { defineError } from "@rd/common";

/**
 * The relay's error catalog: every error a caller can see, with its stable code (decisions.md)
 * and the HTTP status it maps to. Domain modules throw these; each port maps them to its wire:
 * `http/error-handler.ts` to `{error: <code>, message?: <text>, ...details}`,
 * `smtp/smtp-replies.ts` to an SMTP reply by code. Add new kinds here, never ad hoc.
 */
export const Errors = {
  badRequest: defineError("bad_request", 400, "the request is not valid"),
  badDomain: defineError("bad_domain", 400, "the domain name is missing or not valid"),
  badCidr: defineError("bad_cidr", 400, "an entry is not an IP address or CIDR block"),
  selfLockout: defineError(
    "self_lockout",
    400,
    "the new allowlist does not admit the address making the change",
  ),
  unknownDomain: defineError("unknown_domain", 400, "the domain is not configured"),
  noDkimKit: defineError("no_dkim_kit", 400, "the sender domain has no DKIM key"),
  fromMismatch: defineError(
    "from_mismatch",
    400,
    "the From header domain differs from the envelope",
  ),
  repeatedHeader: defineError("repeated_header", 400, "a signed header is repeated"),
  badFrom: defineError("bad_from", 400, "from must be 'Name <a@domain>' or 'a@domain'"),
  badRecipient: defineError("bad_recipient", 400, "a recipient is not a valid address"),
  emptyRaw: defineError("empty_raw", 400, "raw is empty"),
  badMessage: defineError("bad_message", 400, "the message header block is malformed"),
  headersTooLarge: defineError("headers_too_large", 400, "the message header block is too large"),
  headerNotAllowed: defineError(
    "header_not_allowed",
    400,
    "this header is written by the relay or belongs to the MIME structure",
  ),
  badHeader: defineError("bad_header", 400, "a custom header name or value is not valid"),
  badReplyTo: defineError("bad_reply_to", 400, "reply_to must be 'Name <a@domain>' or 'a@domain'"),
  badAttachment: defineError("bad_attachment", 400, "an attachment is not valid"),
  badMetadata: defineError("bad_metadata", 400, "metadata is not a valid flat string map"),
  badAddress: defineError("bad_address", 400, "the address is not a valid e-mail address"),
  badIdempotencyKey: defineError(
    "bad_idempotency_key",
    400,
    "Idempotency-Key must be 1 to 255 printable ASCII characters",
  ),
  unauthorized: defineError("unauthorized", 401, "missing or wrong credentials"),
  forbidden: defineError("forbidden", 403, "this address may not call the relay"),
  domainPending: defineError("domain_pending", 403, "the sender domain is not active yet"),
  domainNotAllowed: defineError(
    "domain_not_allowed",
    403,
    "the client may not send for this domain",
  ),
  notFound: defineError("not_found", 404, "not found"),
  exists: defineError("exists", 409, "it already exists"),
  inProgress: defineError(
    "in_progress",
    409,
    "a request with this Idempotency-Key is still being processed; retry later",
  ),
  payloadTooLarge: defineError("payload_too_large", 413, "the request body is too large"),
  unsupportedMediaType: defineError("unsupported_media_type", 415, "the body must be JSON"),
  idempotencyKeyReused: defineError(
    "idempotency_key_reused",
    422,
    "this Idempotency-Key was used with a different request",
  ),
  rateLimited: defineError("rate_limited", 429, "too many requests; retry later"),
  quotaExceeded: defineError("quota_exceeded", 429, "the sender domain's quota is used up"),
  persistFailed: defineError("persist_failed", 500, "the change could not be saved"),
  signingFailed: defineError("signing_failed", 500, "the message could not be signed"),
  internal: defineError("internal", 500, "internal error"),
  unavailable: defineError("unavailable", 503, "the service is not available"),
} as const;
