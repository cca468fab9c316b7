import { Errors } from "../errors.js";

/**
 * Largest header block the relay accepts (`/send-raw`, SMTP) or builds (`/send`), in octets.
 * Far above what mail needs (Exim's default is the same, Postfix keeps 100 KiB), it bounds the
 * work one message can ask of the header parsers and of every server on the way.
 */
export const MAX_HEADER_BLOCK_BYTES = 1024 * 1024;

/** Throws `headers_too_large` when a header block of `bytes` octets is over the limit. */
export function checkHeaderBlockSize(bytes: number): void {
  if (bytes > MAX_HEADER_BLOCK_BYTES) {
    throw Errors.headersTooLarge(
      `the header block is ${bytes} octets; at most ${MAX_HEADER_BLOCK_BYTES} are accepted`,
    );
  }
}
