import { defineError } from "@rd/common";

// The delivery's domain errors, each code defined once. Services throw them; http/ maps them
// to the wire (`{error: message}` with the status). This module is a leaf: it imports only
// @rd/common, so every layer may throw from it. A consumer decides by `code`, never by status.

// ---- Access ----

/** Missing or invalid credentials, a closed registration, an expired session (the decided wire answer). */
export const Unauthorized = defineError("unauthorized", 401, "Unauthorized");
/** A logged-in user on an endpoint reserved to the API key. */
export const ApiKeyRequired = defineError("api_key_required", 403, "API key required");
/** A state-changing request sent by a page of another site (see http/cross-site-guard.ts). */
export const CrossSiteRequest = defineError(
  "cross_site_request",
  403,
  "Cross-site request refused",
);

// ---- Users ----

/** The one answer to every failed login, whatever failed (unknown email or wrong password). */
export const InvalidCredentials = defineError(
  "invalid_credentials",
  401,
  "Invalid email or password",
);
export const InvalidInput = defineError("invalid_input", 400, "Invalid input");
/** A valid session whose user no longer exists. */
export const UserNotFound = defineError("user_not_found", 401, "Unauthorized");
export const EmailTaken = defineError("email_taken", 409, "A user with this email already exists");

// ---- Repositories ----

export const InvalidRepositoryName = defineError(
  "invalid_repository",
  400,
  "Invalid repository format, expected owner/repo",
);
export const RepositoryExists = defineError(
  "repository_exists",
  409,
  "Repository is already registered",
);
/** Not registered here (by id), or unknown to the code host (by name). */
export const RepositoryNotFound = defineError("repository_not_found", 404, "Repository not found");
/** A release question about an `owner/repo` that is not registered. */
export const RepositoryNotRegistered = defineError(
  "repository_not_registered",
  404,
  "Repository is not registered in the database",
);

// ---- Releases ----

/** A tag that no release can have: refused before the code host is asked. */
export const InvalidTag = defineError("invalid_tag", 400, "Invalid release tag");
export const NoRelease = defineError("no_release", 404, "The repository has no release");
export const ReleaseNotFound = defineError("release_not_found", 404, "Release not found");

// ---- Storage ----

export const InvalidObjectKey = defineError("invalid_object_key", 400, "invalid object key");
export const InvalidBucketName = defineError("invalid_bucket_name", 400, "invalid bucket name");

// ---- Code host ----

/** The code host failed or refused a request the service needed (network, 5xx, bad token, rate limit). */
export const CodeHostUnavailable = defineError(
  "codehost_unavailable",
  502,
  "The code host did not answer the request",
);

// ---- Webhooks ----

/** A delivery whose signature is missing or does not match the webhook secret. */
export const InvalidSignature = defineError("invalid_signature", 401, "Invalid signature");
/** A delivery whose body is not the JSON the code host sends for its event. */
export const MalformedDelivery = defineError(
  "malformed_delivery",
  400,
  "The webhook payload is not a valid event",
);
export const WebhookNotConfigurable = defineError(
  "webhook_not_configurable",
  503,
  "PUBLIC_URL and HOSTING_WEBHOOK_SECRET must be set to create webhooks",
);
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
export const WebhookNotFound = defineError("webhook_not_found", 404, "Webhook not found");

// ---- Notifications ----

/** Telegram did not take the message: not configured, refused it, or could not be reached. */
export const TelegramUnavailable = defineError(
  "telegram_unavailable",
  503,
  "Telegram did not accept the message",
);
export const NotificationNotFound = defineError("not_found", 404, "Not Found");
