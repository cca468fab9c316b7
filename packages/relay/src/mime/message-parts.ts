/**
 * The parts of an RFC 5322 message with CRLF line endings, handled as latin1 text (one
 * character per octet): the header block, its fields, the body. Single passes, linear in size.
 */

const CRLF = "\r\n";

/**
 * One header field as written: its name (empty for a line without a colon) and the text after
 * the colon, folds included.
 */
export interface RawHeaderField {
  readonly name: string;
  readonly value: string;
}

/**
 * Splits a message at its first empty line. `body` is null when there is none: the message is
 * all header (RFC 5322 §3.5 makes the body optional).
 */
export function splitMessage(message: string): { headerBlock: string; body: string | null } {
  if (message.startsWith(CRLF)) return { headerBlock: "", body: message.slice(CRLF.length) };
  const end = message.indexOf(CRLF + CRLF);
  if (end === -1) {
    return { headerBlock: message.endsWith(CRLF) ? message.slice(0, -2) : message, body: null };
  }
  return { headerBlock: message.slice(0, end), body: message.slice(end + 4) };
}

/**
 * The fields of a CRLF header block, continuation lines kept with the field they continue.
 * NOTE: parts are collected and joined once per field; appending line by line to a growing
 * field (what mailauth 4.x does) is quadratic in the number of folded lines.
 */
export function headerFields(headerBlock: string): RawHeaderField[] {
  if (headerBlock === "") return [];
  const fields: RawHeaderField[] = [];
  let name = "";
  let parts: string[] = [];
  const flush = () => {
    if (parts.length > 0) fields.push({ name, value: parts.join(CRLF) });
  };
  for (const line of headerBlock.split(CRLF)) {
    if ((line.startsWith(" ") || line.startsWith("\t")) && parts.length > 0) {
      parts.push(line);
      continue;
    }
    flush();
    const colon = line.indexOf(":");
    // Obsolete syntax allows spaces before the colon (RFC 5322 §4.5).
    let nameEnd = Math.max(colon, 0);
    while (nameEnd > 0 && (line[nameEnd - 1] === " " || line[nameEnd - 1] === "\t")) nameEnd -= 1;
    name = line.slice(0, nameEnd);
    parts = [line.slice(colon + 1)];
  }
  flush();
  return fields;
}
