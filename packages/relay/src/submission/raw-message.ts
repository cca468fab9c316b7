import addressparser from "nodemailer/lib/addressparser/index.js";
import { domainOf } from "../addresses/email-address.js";
import { Errors } from "../errors.js";
import { prepend } from "../mime/headroom.js";
import { headerFields, type MessageParts, splitMessage, toCrlf } from "../mime/message-parts.js";
import { checkHeaderBlockSize } from "./header-limit.js";

/** Headers that may appear at most once in a submitted message (decisions → Sending). */
export const SINGLE_INSTANCE_HEADERS = ["from", "to", "subject", "date", "message-id"] as const;

const CRLF = "\r\n";
// ftext of RFC 5322: printable US-ASCII except the colon.
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const MSG_ID = /<[^<>\s]+>/;

/** One header field: its name as written and its unfolded, trimmed value. */
export interface HeaderField {
  readonly name: string;
  readonly value: string;
}

/** A raw message ready to sign: CRLF throughout, `Date` and `Message-ID` guaranteed. */
export interface PreparedRawMessage {
  /** NOTE: in parts, the body a view of the input: a 1 MiB body is copied only once signed. */
  readonly message: MessageParts;
  /** The `Message-ID` (angle-bracketed): the client's own when it gave one. */
  readonly messageId: string;
  /** Octets of the Subject header value as written (encoded words not decoded). */
  readonly subjectLength: number;
  /** Octets after the header block. */
  readonly bodyBytes: number;
}

export interface RawMessageContext {
  /** Domain of the envelope sender: every `From` address must be on it. */
  readonly envelopeDomain: string;
  /** Makes a Message-ID for a message that has none. */
  readonly newMessageId: () => string;
  readonly now: Date;
}

/**
 * Normalises a `/send-raw` message: line endings become CRLF (bare LF and bare CR included),
 * the header block is checked (no repeated From/To/Subject/Date/Message-ID, `From` on the
 * envelope domain), and missing `Date` / `Message-ID` headers are prepended. Everything else,
 * the body, attachments and custom headers, is kept byte for byte.
 */
export function prepareRawMessage(
  raw: Buffer | string,
  context: RawMessageContext,
): PreparedRawMessage {
  // NOTE: the message is handled as latin1 text, one character per byte, so that any octets
  // (8-bit bodies, non-UTF-8 charsets) come back out unchanged. A JSON string is UTF-8 first.
  const bytes = typeof raw === "string" ? Buffer.from(raw, "utf8") : raw;
  const normalised = toCrlf(bytes);
  if (isBlank(normalised)) throw Errors.emptyRaw();
  const { headerBlock, bodyStart } = splitMessage(normalised);
  checkHeaderBlockSize(headerBlock.length);
  const fields = parseHeaderBlock(headerBlock);

  for (const name of SINGLE_INSTANCE_HEADERS) {
    if (fields.filter((field) => field.name.toLowerCase() === name).length > 1) {
      throw Errors.repeatedHeader(`the ${canonicalName(name)} header appears more than once`);
    }
  }
  checkFromDomain(fieldValue(fields, "from"), context.envelopeDomain);

  const added: string[] = [];
  if (fieldValue(fields, "date") === undefined) added.push(`Date: ${formatDate(context.now)}`);
  let messageId = fieldValue(fields, "message-id");
  if (messageId === undefined) {
    messageId = context.newMessageId();
    added.push(`Message-ID: ${messageId}`);
  } else {
    const match = MSG_ID.exec(messageId);
    if (!match) throw Errors.badMessage("the Message-ID header is not of the form <id@domain>");
    messageId = match[0];
  }

  const prefix = Buffer.from(added.map((line) => line + CRLF).join(""), "latin1");
  const headEnd = bodyStart ?? normalised.length;
  const head = [normalised.subarray(0, headEnd), endOfHeader(normalised, bodyStart)];
  return {
    message: { head: prepend(prefix, head), body: normalised.subarray(headEnd) },
    messageId,
    subjectLength: (fieldValue(fields, "subject") ?? "").length,
    bodyBytes: bodyStart === null ? 0 : normalised.length - bodyStart,
  };
}

/**
 * What a message that is all header (RFC 5322 makes the body optional) lacks of the empty line
 * that ends its header block, so that it is signed and sent with an empty body.
 */
function endOfHeader(message: Buffer, bodyStart: number | null): Buffer {
  if (bodyStart !== null) return Buffer.alloc(0);
  return Buffer.from(message.at(-1) === 0x0a ? CRLF : CRLF + CRLF, "latin1");
}

/** Whether the message is whitespace only (what `String.trim` removes, octets read as latin1). */
function isBlank(message: Buffer): boolean {
  return message.every(
    (octet) => (octet >= 0x09 && octet <= 0x0d) || octet === 0x20 || octet === 0xa0,
  );
}

/** Parses a CRLF header block into fields, unfolding continuation lines (RFC 5322 §2.2.3). */
export function parseHeaderBlock(headerBlock: string): HeaderField[] {
  return headerFields(headerBlock).map(({ name, value }, index) => {
    if (!FIELD_NAME.test(name)) {
      throw Errors.badMessage(`header field ${index + 1} is not "Name: value"`);
    }
    return { name, value: value.replaceAll(CRLF, "").trim() };
  });
}

function fieldValue(fields: readonly HeaderField[], name: string): string | undefined {
  return fields.find((field) => field.name.toLowerCase() === name)?.value;
}

function checkFromDomain(from: string | undefined, envelopeDomain: string): void {
  if (from === undefined) throw Errors.fromMismatch("the message has no From header");
  const addresses = addressparser(from, { flatten: true });
  if (addresses.length === 0) throw Errors.fromMismatch("the From header holds no address");
  for (const { address } of addresses) {
    if (!address.includes("@") || domainOf(address) !== envelopeDomain.toLowerCase()) {
      throw Errors.fromMismatch(
        `the From header address ${JSON.stringify(address)} is not on ${envelopeDomain}`,
      );
    }
  }
}

function canonicalName(name: string): string {
  return name === "message-id"
    ? "Message-ID"
    : name.replace(/(^|-)([a-z])/g, (_, dash: string, c: string) => dash + c.toUpperCase());
}

/** RFC 5322 date-time in UTC: `Thu, 01 Jan 1970 00:00:00 +0000`. */
export function formatDate(date: Date): string {
  // NOTE: toUTCString gives the obsolete zone "GMT"; RFC 5322 prefers a numeric offset.
  return date.toUTCString().replace(/GMT$/, "+0000");
}
