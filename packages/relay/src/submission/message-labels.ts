import { Errors } from "../errors.js";
import { MAX_METADATA_BYTES } from "./send-request.js";

/** A metadata key: what a later status or webhook consumer can use as a field name. */
const MAX_METADATA_KEY_LENGTH = 64;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the purpose.
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Checks a `/send` request's metadata (its flat shape is the schema's): keys of 1 to
 * MAX_METADATA_KEY_LENGTH characters without control characters, and at most
 * MAX_METADATA_BYTES octets as JSON. Throws `bad_metadata`; returns the map.
 */
export function checkMetadata(
  metadata: Readonly<Record<string, string>>,
): Readonly<Record<string, string>> {
  for (const key of Object.keys(metadata)) {
    if (key.length === 0 || key.length > MAX_METADATA_KEY_LENGTH || CONTROL.test(key)) {
      throw Errors.badMetadata(
        `metadata key ${JSON.stringify(key)} must be 1 to ${MAX_METADATA_KEY_LENGTH} characters without control characters`,
      );
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(metadata));
  if (bytes > MAX_METADATA_BYTES) {
    throw Errors.badMetadata(
      `metadata is ${bytes} octets as JSON; at most ${MAX_METADATA_BYTES} are accepted`,
    );
  }
  return metadata;
}
