import { defineError } from "@rd/common";

// Refusals of a submission (HTTP and SMTP). Codes are the wire contract (decisions → HTTP rules).

/** `from` is not `Name <a@domain>` or `a@domain`. */
export const BadFromError = defineError(
  "bad_from",
  400,
  "from must be 'Name <a@domain>' or 'a@domain'",
);
/** A recipient is not a valid address. */
export const BadRecipientError = defineError("bad_recipient", 400, "invalid recipient address");
/** `/send-raw` without a message. */
export const EmptyRawError = defineError("empty_raw", 400, "raw is empty");
/** The raw message's header block cannot be parsed. */
export const BadMessageError = defineError("bad_message", 400, "malformed message header");
/** A header of the signed set appears more than once. */
export const RepeatedHeaderError = defineError("repeated_header", 400, "repeated header");
/** The `From` header's domain is not the envelope domain. */
export const FromMismatchError = defineError(
  "from_mismatch",
  400,
  "the From header domain differs from the envelope domain",
);
/** The client's domain list does not hold the sender domain. */
export const DomainNotAllowedError = defineError(
  "domain_not_allowed",
  403,
  "this client may not send for this domain",
);
/** The sender domain is not configured (or has no key). */
export const NoDkimKitError = defineError("no_dkim_kit", 400, "the sender domain has no DKIM kit");
/** The sender domain is configured but still `pending`. */
export const DomainPendingError = defineError(
  "domain_pending",
  403,
  "the sender domain is pending: publish its DNS records and run GET /check",
);
/** The domain's hourly or daily recipient quota would overflow; details `limit`, `resets_at`. */
export const QuotaExceededError = defineError("quota_exceeded", 429, "domain quota exceeded");
