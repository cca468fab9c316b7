/**
 * DKIM "relaxed" canonicalization (RFC 6376 §3.4.2 and §3.4.4) of a message with CRLF line
 * endings, handled as latin1 text (one character per octet). Every step is a single pass:
 * the cost is linear in the size of the message whatever its shape (tens of thousands of
 * folded lines included).
 */

import { createHash } from "node:crypto";
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
 * The `bh=` value: SHA-256 (base64) of the body in relaxed form. Most bodies have no tab, no
 * run of spaces and no space before a line end or at their end; their bytes are hashed where
 * they are (up to the trailing empty lines), without a canonical copy.
 * NOTE: on the event loop, whatever the size. WebCrypto's digest ran a large body's hash in the
 * thread pool, but copied the body into the job and wiped the copy after: the thirtieth
 * session's probe (1 MiB `/send-raw`, two series of four alternations) measured 7–10% less relay
 * CPU a message and 3–7% more messages a second with the hash here (128 KiB: 4.6% less, 5% more),
 * at some 0.7 ms of the event loop a MiB (that Intel model-167 machine, idle; bench/ROUNDS.md).
 */
export function relaxedBodyHash(body: Buffer): string {
  const hash = createHash("sha256");
  if (needsRewrite(body)) {
    return hash.update(relaxedBody(body.toString("latin1")), "latin1").digest("base64");
  }
  let end = body.length;
  while (end >= 2 && body[end - 2] === 0x0d && body[end - 1] === 0x0a) end -= 2;
  // A body that ended in CRLF keeps its first trailing one: the canonical form is a prefix.
  if (end > 0) hash.update(body.subarray(0, end)).update(CRLF);
  return hash.digest("base64");
}

function needsRewrite(body: Buffer): boolean {
  return (
    body.includes("\t") || body.includes("  ") || body.includes(` ${CRLF}`) || body.at(-1) === 0x20
  );
}
