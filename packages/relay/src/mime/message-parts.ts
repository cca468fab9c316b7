/**
 * The parts of an RFC 5322 message with CRLF line endings, handled as latin1 text (one
 * character per octet): the header block, its fields, the body. Single passes, linear in size.
 */

import { allocForMessage } from "./headroom.js";

const CRLF = "\r\n";
const CR = 0x0d;
const LF = 0x0a;

/** Buffers whose every CR and LF their producer saw paired as CRLF (`markCrlfOnly`). */
const crlfOnly = new WeakSet<Buffer>();

/**
 * Records that `bytes`, which must not change after, holds no bare CR or LF, as its producer
 * counted while writing them (the JSON decoder of `/send-raw` bodies): `toCrlf` takes them as
 * they are, without its scan of two `indexOf` calls a line.
 * NOTE: that scan took 0.5 ms a MiB on Node 20 and 1.1 on Node 24, whose `Buffer#indexOf`
 * costs twice as much a call (AMD family 25 model 1, bench/ROUNDS.md).
 */
export function markCrlfOnly(bytes: Buffer): void {
  crlfOnly.add(bytes);
}

/**
 * The bytes with every bare CR and bare LF made CRLF (the input itself when there is none).
 * NOTE: byte loops, not a regular expression (which took 3 s for 8 MiB of bare LFs); the check
 * for bare ends jumps from line end to line end with `indexOf`, the common case (none).
 */
export function toCrlf(input: Buffer): Buffer {
  if (crlfOnly.has(input)) return input;
  const bare = bareLineEnds(input);
  if (bare === 0) return input;
  const output = allocForMessage(input.length + bare);
  let at = 0;
  for (let index = 0; index < input.length; index += 1) {
    const byte = input[index] as number;
    if (byte !== CR && byte !== LF) {
      output[at++] = byte;
      continue;
    }
    output[at++] = CR;
    output[at++] = LF;
    if (byte === CR && input[index + 1] === LF) index += 1;
  }
  return output;
}

/** How many LFs follow no CR, plus how many CRs precede no LF. */
function bareLineEnds(input: Buffer): number {
  let bare = 0;
  for (let at = input.indexOf(LF); at !== -1; at = input.indexOf(LF, at + 1)) {
    if (at === 0 || input[at - 1] !== CR) bare += 1;
  }
  for (let at = input.indexOf(CR); at !== -1; at = input.indexOf(CR, at + 1)) {
    if (input[at + 1] !== LF) bare += 1;
  }
  return bare;
}

/**
 * One header field as written: its name (empty for a line without a colon) and the text after
 * the colon, folds included.
 */
export interface RawHeaderField {
  readonly name: string;
  readonly value: string;
}

/**
 * Splits a message at its first empty line: the header block as text, and where the body
 * starts (null when there is none: the message is all header, which RFC 5322 §3.5 allows).
 * The body stays bytes: a large message is never turned into a string whole.
 */
export function splitMessage(message: Buffer): { headerBlock: string; bodyStart: number | null } {
  if (startsWithCrlf(message, 0)) return { headerBlock: "", bodyStart: CRLF.length };
  const end = message.indexOf(CRLF + CRLF);
  if (end === -1) {
    const headerEnd = startsWithCrlf(message, message.length - 2)
      ? message.length - 2
      : message.length;
    return { headerBlock: message.toString("latin1", 0, headerEnd), bodyStart: null };
  }
  return { headerBlock: message.toString("latin1", 0, end), bodyStart: end + 4 };
}

/**
 * A message as its head (the header block, through the empty line that ends it) and its body:
 * apart, so that a large body is not copied when headers are added to its head. It is copied
 * once, when its signature is put before it, unless the two lie back to back after free octets
 * (`prepend`, `mime/headroom.ts`).
 */
export interface MessageParts {
  readonly head: Buffer;
  readonly body: Buffer;
}

/** `message` cut where its body starts (all head when it has none), no octet copied. */
export function messageParts(message: Buffer): MessageParts {
  const at = splitMessage(message).bodyStart ?? message.length;
  return { head: message.subarray(0, at), body: message.subarray(at) };
}

function startsWithCrlf(bytes: Buffer, at: number): boolean {
  return at >= 0 && bytes[at] === CR && bytes[at + 1] === LF;
}

/**
 * The fields of a CRLF header block, continuation lines kept with the field they continue.
 * NOTE: each field is one slice of the block, found by scanning for line ends; appending line
 * by line to a growing field (what mailauth 4.x does) is quadratic in the number of folded
 * lines, and even an array of lines per field costs an allocation per line.
 */
export function headerFields(headerBlock: string): RawHeaderField[] {
  const fields: RawHeaderField[] = [];
  let start = 0;
  while (start < headerBlock.length) {
    const lineEnd = lineEndAt(headerBlock, start);
    let end = lineEnd;
    while (end < headerBlock.length && isWsp(headerBlock.charCodeAt(end + CRLF.length))) {
      end = lineEndAt(headerBlock, end + CRLF.length);
    }
    const colon = headerBlock.slice(start, lineEnd).indexOf(":");
    if (colon === -1) {
      fields.push({ name: "", value: headerBlock.slice(start, end) });
    } else {
      // Obsolete syntax allows spaces before the colon (RFC 5322 §4.5).
      let nameEnd = start + colon;
      while (nameEnd > start && isWsp(headerBlock.charCodeAt(nameEnd - 1))) nameEnd -= 1;
      fields.push({
        name: headerBlock.slice(start, nameEnd),
        value: headerBlock.slice(start + colon + 1, end),
      });
    }
    start = end + CRLF.length;
  }
  return fields;
}

/** Index of the CRLF that ends the line starting at `start`, or the block's length. */
function lineEndAt(block: string, start: number): number {
  const end = block.indexOf(CRLF, start);
  return end === -1 ? block.length : end;
}

function isWsp(code: number): boolean {
  return code === 0x20 || code === 0x09;
}
