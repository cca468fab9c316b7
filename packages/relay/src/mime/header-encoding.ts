import mimeFuncs from "nodemailer/lib/mime-funcs/index.js";

/**
 * Header fields the relay writes itself (`/send`), folded so that no line is longer than
 * RFC 5322 §2.1.1 allows. Folding happens only at spaces, so text with a run that cannot be
 * folded (a long word, a long run of spaces) or that is not printable ASCII is written as
 * RFC 2047 encoded words, each on its own line, as Python's email package does.
 * NOTE: nodemailer's MailComposer writes a long ASCII word as it is: a subject or display name
 * of 2,000 letters became a 2,000-character line, which strict servers refuse.
 */

/** Where lines are folded (RFC 5322: lines SHOULD be at most 78 characters, MUST be 998). */
export const FOLD_LINE_LENGTH = 76;
/**
 * UTF-8 octets per encoded word: 42 give 56 characters of base64, 68 with `=?UTF-8?B?` and
 * `?=`, under RFC 2047's 75 even when a code point is cut short.
 */
const ENCODED_WORD_OCTETS = 42;

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
// A run of FOLD_LINE_LENGTH characters without a fold point, or of spaces (which would fold
// into a line of nothing but spaces).
const UNFOLDABLE = /[^ ]{76}| {76}/;
// An RFC 5322 atom phrase: written without quotes.
const ATOMS = /^[\w ]*$/;

/** A mailbox as written in an address field. */
export interface MailboxText {
  readonly address: string;
  readonly name?: string;
}

/** `Name: value` for unstructured text (Subject); line breaks in `value` become spaces. */
export function unstructuredField(name: string, value: string): string {
  const text = value.replace(/\r\n|\r|\n/g, " ");
  return needsEncoding(text)
    ? `${name}: ${encodedWords(text)}`
    : mimeFuncs.foldLines(`${name}: ${text}`, FOLD_LINE_LENGTH);
}

/** `Name: a@domain, Name <b@domain>, …` (From, To); addresses are already valid and ASCII. */
export function mailboxListField(name: string, mailboxes: readonly MailboxText[]): string {
  const list = mailboxes.map(({ name: display, address }) =>
    display ? `${phrase(display)} <${address}>` : address,
  );
  return mimeFuncs.foldLines(`${name}: ${list.join(", ")}`, FOLD_LINE_LENGTH);
}

function needsEncoding(text: string): boolean {
  // "=?" would be read back as the start of an encoded word.
  return !PRINTABLE_ASCII.test(text) || text.includes("=?") || UNFOLDABLE.test(text);
}

/** A display name: atoms as they are, other printable text quoted, the rest encoded words. */
function phrase(display: string): string {
  if (needsEncoding(display)) return encodedWords(display);
  if (ATOMS.test(display)) return display;
  return `"${display.replace(/[\\"]/g, "\\$&")}"`;
}

/**
 * `text` as base64 encoded words of at most ENCODED_WORD_OCTETS octets each, never splitting a
 * character, one per line. One pass over the text: linear in its length.
 */
function encodedWords(text: string): string {
  const words: string[] = [];
  let start = 0;
  let octets = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    const isPair = code >= 0xd800 && code <= 0xdbff && index + 1 < text.length;
    const size = code < 0x80 ? 1 : code < 0x800 ? 2 : isPair ? 4 : 3;
    if (octets + size > ENCODED_WORD_OCTETS) {
      words.push(text.slice(start, index));
      start = index;
      octets = 0;
    }
    octets += size;
    if (isPair) index += 1;
  }
  words.push(text.slice(start));
  return words
    .map((word) => `=?UTF-8?B?${Buffer.from(word, "utf8").toString("base64")}?=`)
    .join("\r\n ");
}
