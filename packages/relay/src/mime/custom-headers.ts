import mimeFuncs from "nodemailer/lib/mime-funcs/index.js";
import { Errors } from "../errors.js";
import { FOLD_LINE_LENGTH, unstructuredField } from "./header-encoding.js";

/**
 * Header fields a `/send` caller may not set through `headers`, compared without case: the
 * relay writes them from the request's own fields (addresses, subject) or its identity of the
 * message (Date, Message-ID), they make the MIME structure, or only servers on the way may add
 * them (signatures, trace and authentication results). In-Reply-To and References stay open
 * for threading: the relay never writes them, and the signature covers them when present.
 */
export const RESERVED_HEADERS = [
  "From",
  "Sender",
  "To",
  "Cc",
  "Bcc",
  "Reply-To",
  "Subject",
  "Date",
  "Message-ID",
  "MIME-Version",
  "DKIM-Signature",
  "Return-Path",
  "Received",
  "Received-SPF",
  "Authentication-Results",
  "ARC-Seal",
  "ARC-Message-Signature",
  "ARC-Authentication-Results",
] as const;
/** Every `Content-*` field (Content-Type, Content-Transfer-Encoding …) belongs to the MIME structure. */
export const RESERVED_HEADER_PREFIX = "Content-";

/** Custom headers per message: far above what senders use (List-Unsubscribe, X-Campaign …). */
export const MAX_CUSTOM_HEADERS = 50;
/** A name fits on its first line with room for a value (RFC 5322 lines SHOULD be at most 78). */
const MAX_NAME_LENGTH = 76;
/** RFC 5322 §2.1.1: a line MUST be at most 998 octets, CRLF excluded. */
const MAX_LINE_OCTETS = 998;

const RESERVED = new Set(RESERVED_HEADERS.map((name) => name.toLowerCase()));
// RFC 5322 §3.6.8 field name: printable ASCII but the colon.
const FIELD_NAME = /^[!-9;-~]+$/;
// Line breaks would start a new header line; other control characters have no place in one.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the purpose.
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const PRINTABLE_ASCII = /^[\t\x20-\x7e]*$/;

/**
 * The header lines of a `/send` request's `headers`, in the order given, folded. A value of
 * printable ASCII is written as given (folded at spaces only, so a structured value such as
 * List-Unsubscribe keeps its meaning); any other text becomes RFC 2047 encoded words.
 * Throws `header_not_allowed` for a reserved name and `bad_header` for an invalid or repeated
 * name, a value with a line break or control character, or one a fold cannot bring within 998
 * octets per line; each names the header (detail `header`).
 */
export function customHeaderFields(headers: Readonly<Record<string, string>>): string[] {
  const seen = new Set<string>();
  return Object.entries(headers).map(([name, value]) => {
    const lower = name.toLowerCase();
    const refuse = (message: string) => Errors.badHeader(message, { header: name });
    if (!FIELD_NAME.test(name) || name.length > MAX_NAME_LENGTH) {
      throw refuse(
        `header name ${JSON.stringify(name)} must be 1 to ${MAX_NAME_LENGTH} printable ASCII characters without a colon or space`,
      );
    }
    if (RESERVED.has(lower) || lower.startsWith(RESERVED_HEADER_PREFIX.toLowerCase())) {
      throw Errors.headerNotAllowed(
        `header ${name} may not be set in headers: the relay writes it, or it belongs to the MIME structure or to servers on the way`,
        { header: name },
      );
    }
    if (seen.has(lower))
      throw refuse(`header ${name} is given twice (names are compared without case)`);
    seen.add(lower);
    if (CONTROL.test(value)) {
      throw refuse(`the value of header ${name} contains a line break or control character`);
    }
    if (!PRINTABLE_ASCII.test(value)) return unstructuredField(name, value);
    const field = mimeFuncs.foldLines(`${name}: ${value}`, FOLD_LINE_LENGTH);
    if (field.split("\r\n").some((line) => line.length > MAX_LINE_OCTETS)) {
      throw refuse(
        `the value of header ${name} has a run without spaces too long for a ${MAX_LINE_OCTETS}-octet line`,
      );
    }
    return field;
  });
}
