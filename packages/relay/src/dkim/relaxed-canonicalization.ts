/**
 * DKIM "relaxed" canonicalization (RFC 6376 §3.4.2 and §3.4.4) of a message with CRLF line
 * endings, handled as latin1 text (one character per octet). Every step is a single pass:
 * the cost is linear in the size of the message whatever its shape (tens of thousands of
 * folded lines included).
 */

import { createHash, webcrypto } from "node:crypto";
import type { RawHeaderField } from "../mime/message-parts.js";

const CRLF = "\r\n";

/**
 * `name:value` in relaxed form (a field as `headerFields` gives it, without WSP before the
 * colon): the name in lower case, the value unfolded, every run of
 * spaces and tabs one space, none at either end. (Only WSP counts: a latin1 0xA0 octet,
 * which JavaScript's `\s` and `trim()` would take for a space, is content.)
 */
export function relaxedHeader(field: RawHeaderField): string {
  const value = field.value.replaceAll(CRLF, "").replace(/[ \t]+/g, " ");
  const start = value.startsWith(" ") ? 1 : 0;
  const end = value.endsWith(" ") && value.length > start ? value.length - 1 : value.length;
  return `${field.name.toLowerCase()}:${value.slice(start, end)}`;
}

/**
 * The body in relaxed form: spaces and tabs at the end of each line removed, other runs of
 * them one space, empty lines at the end removed, and a non-empty body ending in CRLF.
 */
export function relaxedBody(body: string): string {
  // NOTE: compressing first leaves at most one space before each CRLF, so plain replacements
  // do the rest (a regex with a lookahead after `[ \t]+` backtracks quadratically on long runs).
  let canonical = body.replace(/[ \t]+/g, " ").replaceAll(` ${CRLF}`, CRLF);
  if (canonical.endsWith(" ")) canonical = canonical.slice(0, -1);
  let end = canonical.length;
  while (end >= CRLF.length && canonical.startsWith(CRLF, end - CRLF.length)) end -= CRLF.length;
  return end === 0 ? "" : canonical.slice(0, end) + CRLF;
}

/**
 * Bodies from this size on are hashed in libuv's thread pool (WebCrypto's digest), off the
 * event loop: SHA-256 of 1 MiB took 1.4 ms of it under load; below, the hop costs more than it saves.
 */
const OFF_THREAD_HASH_BYTES = 64 * 1024;

/**
 * The `bh=` value: SHA-256 (base64) of the body in relaxed form. Most bodies have no tab, no
 * run of spaces and no space before a line end or at their end; their bytes are hashed where
 * they are (up to the trailing empty lines), without a canonical copy.
 */
export async function relaxedBodyHash(body: Buffer): Promise<string> {
  if (needsRewrite(body)) {
    const canonical = relaxedBody(body.toString("latin1"));
    return createHash("sha256").update(canonical, "latin1").digest("base64");
  }
  let end = body.length;
  while (end >= 2 && body[end - 2] === 0x0d && body[end - 1] === 0x0a) end -= 2;
  // A body that ended in CRLF keeps its first trailing one: the canonical form is a prefix.
  if (end >= OFF_THREAD_HASH_BYTES && end < body.length) {
    const digest = await webcrypto.subtle.digest("SHA-256", body.subarray(0, end + CRLF.length));
    return Buffer.from(digest).toString("base64");
  }
  const hash = createHash("sha256");
  if (end > 0) hash.update(body.subarray(0, end)).update(CRLF);
  return hash.digest("base64");
}

function needsRewrite(body: Buffer): boolean {
  return (
    body.includes("\t") || body.includes("  ") || body.includes(` ${CRLF}`) || body.at(-1) === 0x20
  );
}
