import { isAscii } from "node:buffer";
import { randomBytes } from "node:crypto";
import { allocWithHeadroom, HEADROOM_FROM_BYTES } from "../mime/headroom.js";
import { markCrlfOnly } from "../mime/message-parts.js";

/**
 * String values from this many octets on are decoded by `parseWithLongStrings` itself, into
 * memory with headroom: the size from which a message is given headroom.
 */
export const LONG_STRING_BYTES = HEADROOM_FROM_BYTES;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CR = 0x0d;
const LF = 0x0a;
/**
 * What the one-character escapes of RFC 8259 §7 stand for, by the octet after the backslash
 * (-1: none). NOTE: a typed array, as the decoding loop reads it for every escape: an object
 * lookup there made the loop twice as slow.
 */
const ESCAPED = new Int16Array(256).fill(-1);
for (const [letter, octet] of Object.entries({
  '"': 0x22,
  "\\": 0x5c,
  "/": 0x2f,
  b: 0x08,
  f: 0x0c,
  n: 0x0a,
  r: 0x0d,
  t: 0x09,
})) {
  ESCAPED[letter.charCodeAt(0)] = octet;
}
/** The hex digits of a `\u` escape that a Latin-1 string holds. */
const LATIN1_ESCAPE = /^00[0-9a-fA-F]{2}$/;
// A string no client can know: a long value stands in the text given to JSON.parse as this and
// its number, and is put back in the parsed value.
const PLACEHOLDER = `\u0000${randomBytes(12).toString("hex")}#`;
const PLACEHOLDER_LITERAL = JSON.stringify(PLACEHOLDER).slice(0, -1);

/**
 * `JSON.parse` of an ASCII JSON text, its long string values (`LONG_STRING_BYTES`, the message
 * of a `/send-raw`, an attachment's base64) decoded here into a Buffer and read as Latin-1;
 * `undefined` when a long value holds what only `JSON.parse` decides (a control character, an
 * escape other than those of `ESCAPED` or a `\u00XX`, no closing quote): the caller parses the
 * text as usual then, and gets its answer or its error.
 *
 * NOTE: `JSON.parse` puts a string of over 128 KiB in a large-object page of its own, mapped
 * for it and unmapped at the next collection: each MiB is 256 fresh pages, and on a virtual
 * machine where a page fault cost 13 µs, `JSON.parse` of a 1 MiB `/send-raw` body took 4.3 ms
 * (0.8 ms for the same bytes as 16 strings of 64 KiB). A Latin-1 string of about 1 MB or more
 * read from a Buffer is kept outside the V8 heap, in malloc's memory, which is reused. 1 MiB
 * `/send-raw`, alternating, two relays each way: relay CPU 20.1–21.2 → 17.2–19.6 ms a message,
 * accepted 67–70 → 76–85 msg/s.
 *
 * `octetsOnly` names a key of the top-level object whose long ASCII value the caller reads with
 * `asciiBytesOf` only: the parsed object holds a stand-in string in its place (`standIn`).
 * NOTE: a Latin-1 string of a 1 MiB message is a copy of it outside the heap, kept until the
 * request ends. Without it (1 MiB `/send-raw`, seven alternations in two series): peak RSS
 * 15–16% lower in every one, relay CPU 1.5% and 4% less a message (four pairs won, two lost,
 * one even; bench/ROUNDS.md, thirty-second session).
 */
export function parseWithLongStrings(text: Buffer, octetsOnly?: string): unknown {
  const longValues: Buffer[] = [];
  const pieces: string[] = [];
  let copied = 0;
  for (let start = text.indexOf(QUOTE); start !== -1; ) {
    const end = closingQuote(text, start + 1);
    if (end === -1) return undefined;
    if (end - start - 1 >= LONG_STRING_BYTES && !isKey(text, end + 1)) {
      const value = decodeLiteral(text, start + 1, end);
      if (value === undefined) return undefined;
      pieces.push(
        text.toString("latin1", copied, start),
        `${PLACEHOLDER_LITERAL}${longValues.length}"`,
      );
      longValues.push(value);
      copied = end + 1;
    }
    start = text.indexOf(QUOTE, end + 1);
  }
  if (longValues.length === 0) return JSON.parse(text.toString("latin1"));
  pieces.push(text.toString("latin1", copied));
  const parsed: unknown = JSON.parse(pieces.join(""));
  return putBack(parsed, longValues, octetsOnly);
}

/** The decoded octets of long string values, by the object and key that hold each value. */
const asciiValues = new WeakMap<object, Map<string, Buffer>>();

/**
 * The octets of `container[key]` when `parseWithLongStrings` decoded that value and it is ASCII:
 * the value's UTF-8, without encoding the string again (a 1 MiB message's `Buffer.from`).
 */
export function asciiBytesOf(container: object, key: string): Buffer | undefined {
  return asciiValues.get(container)?.get(key);
}

/** The index of the quote that closes the string literal whose content starts at `from`. */
function closingQuote(text: Buffer, from: number): number {
  for (let at = text.indexOf(QUOTE, from); at !== -1; at = text.indexOf(QUOTE, at + 1)) {
    let backslashes = 0;
    while (text[at - 1 - backslashes] === BACKSLASH) backslashes += 1;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

/** Whether a literal ending before `at` is an object's key (a colon follows it). */
function isKey(text: Buffer, at: number): boolean {
  let next = at;
  while (next < text.length && isJsonSpace(text[next] as number)) next += 1;
  return text[next] === 0x3a;
}

function isJsonSpace(octet: number): boolean {
  return octet === 0x20 || octet === 0x09 || octet === 0x0a || octet === 0x0d;
}

/**
 * The octets the literal's content `text[start, end)` stands for, or `undefined` (see above);
 * marked `markCrlfOnly` when every CR and LF among them is a CRLF pair.
 * NOTE: plain octets go four at a time: the bench's 1 MiB body (an escaped CRLF every 78
 * octets) 2.6 → 1.0 ms outside the relay; in it, alternating, 105–120 against 98–107 messages a
 * second accepted, the event loop 5.0–5.8 against 6.6–7.4 ms a message. Runs between escapes
 * copied natively gained nothing: a call per 76 octets costs what it saves.
 */
function decodeLiteral(text: Buffer, start: number, end: number): Buffer | undefined {
  const decoded = allocWithHeadroom(end - start);
  const input = new DataView(text.buffer, text.byteOffset, text.byteLength);
  const output = new DataView(decoded.buffer, decoded.byteOffset, decoded.byteLength);
  let length = 0;
  let at = start;
  let lineFeeds = 0;
  let carriageReturns = 0;
  let pairs = 0;
  while (at < end) {
    // Four plain octets at a time: no control character and no backslash among them.
    if (at + 4 <= end) {
      const word = input.getUint32(at, true);
      if (!hasOctetBelow(word, 0x20) && !hasOctetBelow(word ^ BACKSLASHES, 1)) {
        output.setUint32(length, word, true);
        length += 4;
        at += 4;
        continue;
      }
    }
    const octet = text[at] as number;
    at += 1;
    if (octet >= 0x20 && octet !== BACKSLASH) {
      decoded[length++] = octet;
      continue;
    }
    if (octet < 0x20) return undefined;
    const escaped = text[at] as number;
    let value = ESCAPED[escaped] as number;
    if (value >= 0) {
      at += 1;
    } else if (escaped === 0x75 && LATIN1_ESCAPE.test(text.toString("latin1", at + 1, at + 5))) {
      value = Number.parseInt(text.toString("latin1", at + 3, at + 5), 16);
      at += 5;
    } else {
      return undefined;
    }
    // A JSON string holds line ends only as escapes: counted here, they need no scan later.
    if (value === LF) {
      lineFeeds += 1;
      if (length > 0 && decoded[length - 1] === CR) pairs += 1;
    } else if (value === CR) {
      carriageReturns += 1;
    }
    decoded[length++] = value;
  }
  const bytes = decoded.subarray(0, length);
  if (lineFeeds === pairs && carriageReturns === pairs) markCrlfOnly(bytes);
  return bytes;
}

const BACKSLASHES = 0x5c5c5c5c;
/**
 * Whether one of the four octets of `word` is below `limit` (Hacker's Delight 6-1). The octets are
 * ASCII, so a borrow only follows a real find, and a false find merely takes the octet path.
 */
function hasOctetBelow(word: number, limit: number): boolean {
  return ((word - limit * 0x01010101) & ~word & 0x80808080) !== 0;
}

/**
 * `parsed` with each placeholder string replaced by its long value read as Latin-1 (iteratively:
 * any depth), or by a stand-in for the top-level `octetsOnly`; the ASCII values' octets are kept
 * for `asciiBytesOf`.
 */
function putBack(parsed: unknown, longValues: readonly Buffer[], octetsOnly?: string): unknown {
  const longValueOf = (candidate: unknown) =>
    typeof candidate === "string" && candidate.startsWith(PLACEHOLDER)
      ? longValues[Number(candidate.slice(PLACEHOLDER.length))]
      : undefined;
  const root = longValueOf(parsed);
  if (root !== undefined) return root.toString("latin1");
  const pending: object[] = parsed !== null && typeof parsed === "object" ? [parsed] : [];
  for (let container = pending.pop(); container; container = pending.pop()) {
    const record = container as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = record[key];
      const value = longValueOf(child);
      if (value === undefined) {
        if (child !== null && typeof child === "object") pending.push(child);
        continue;
      }
      const ascii = isAscii(value);
      const standing = ascii && key === octetsOnly && container === parsed;
      record[key] = standing ? standIn(value) : value.toString("latin1");
      if (!ascii) continue;
      const byKey = asciiValues.get(record) ?? new Map<string, Buffer>();
      asciiValues.set(record, byKey.set(key, value));
    }
  }
  return parsed;
}

/** What the parsed object holds in place of octets read only with `asciiBytesOf`. */
export function standIn(octets: Buffer): string {
  return `(${octets.length} ASCII octets, read with asciiBytesOf)`;
}
