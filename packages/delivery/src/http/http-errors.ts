import { defineError } from "@rd/common";

/** Missing or invalid credentials (the decided wire answer). */
export const Unauthorized = defineError("unauthorized", 401, "Unauthorized");
/** A logged-in user on an endpoint reserved to the API key. */
export const ApiKeyRequired = defineError("api_key_required", 403, "API key required");
export const NotFound = defineError("not_found", 404, "Not Found");
export const BadRequest = defineError("bad_request", 400, "Bad Request");
