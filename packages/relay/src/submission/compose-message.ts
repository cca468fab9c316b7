import { Errors } from "../errors.js";
import { mailboxListField, unstructuredField } from "../mime/header-encoding.js";
import { checkHeaderBlockSize } from "./header-limit.js";
import { type Mailbox, parseMailbox } from "./mailbox.js";
import type { SendFields } from "./send-request.js";

/** `/send` fields once validated: parsed sender and recipients (duplicates removed). */
export interface ValidatedSend {
  readonly from: Mailbox;
  readonly to: readonly Mailbox[];
  readonly subject: string;
  readonly html?: string;
  readonly text?: string;
}

/** Checks the sender and recipients of `/send`; throws `bad_from` / `bad_recipient`. */
export function validateSendFields(fields: SendFields): ValidatedSend {
  const from = parseMailbox(fields.from);
  if (!from) throw Errors.badFrom();
  const to = uniqueRecipients(fields.to);
  return { ...fields, from, to };
}

/**
 * Parses recipients (`Name <a@domain>` or `a@domain`) and drops repeats of the same address,
 * so that one recipient gets one delivery and counts once against the quota.
 */
export function uniqueRecipients(values: readonly string[]): Mailbox[] {
  const seen = new Set<string>();
  const recipients: Mailbox[] = [];
  for (const value of values) {
    const mailbox = parseMailbox(value);
    if (!mailbox) throw Errors.badRecipient(`invalid recipient address: ${JSON.stringify(value)}`);
    const key = mailbox.address.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    recipients.push(mailbox);
  }
  return recipients;
}

/**
 * Bodies above this many bytes (text + html) are base64-encoded instead of quoted-printable.
 * NOTE: nodemailer's quoted-printable encoder runs at about 1 MiB/s of CPU, base64 at about
 * 10 MiB/s; below this size QP (readable, what filters expect of text) costs little.
 */
export const QUOTED_PRINTABLE_MAX_BYTES = 256 * 1024;

/**
 * Builds the RFC 5322 message for `/send` (CRLF line endings, UTF-8 encoded where needed):
 * html and text → multipart/alternative; one of them → a single part of that type;
 * neither → an empty text/plain body. From, To and Subject are written by `header-encoding.ts`
 * (folded within RFC 5322's line limit), the rest by nodemailer's MailComposer.
 * Throws `headers_too_large` when the header block would pass `MAX_HEADER_BLOCK_BYTES`.
 */
export async function composeMessage(
  send: ValidatedSend,
  identity: { readonly messageId: string; readonly date: Date },
): Promise<Buffer> {
  // Encoding only makes text longer: what is over the limit already is refused unencoded.
  checkHeaderBlockSize(
    Buffer.byteLength(send.subject) +
      [send.from, ...send.to].reduce((sum, { name }) => sum + Buffer.byteLength(name ?? ""), 0),
  );
  const hasBody = send.html !== undefined || send.text !== undefined;
  const bodyBytes = Buffer.byteLength(send.text ?? "") + Buffer.byteLength(send.html ?? "");
  // NOTE: loaded at the first /send, not at boot: an idle relay does not hold it in memory.
  const { default: MailComposer } = await import("nodemailer/lib/mail-composer/index.js");
  const composer = new MailComposer({
    ...(send.text !== undefined && { text: send.text }),
    ...(send.html !== undefined && { html: send.html }),
    ...(!hasBody && { text: "" }),
    ...(bodyBytes > QUOTED_PRINTABLE_MAX_BYTES && { textEncoding: "base64" as const }),
    messageId: identity.messageId,
    date: identity.date,
    // The content is data, never a path or URL to fetch.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const addressed = [
    mailboxListField("From", [send.from]),
    mailboxListField("To", send.to),
    // Like MailComposer, no Subject field for a blank subject.
    ...(send.subject.trim() === "" ? [] : [unstructuredField("Subject", send.subject)]),
  ];
  // NOTE: MailComposer keeps the text's bare LFs in quoted-printable bodies. They become CRLF
  // on the wire (SMTP data), so they become CRLF here: what is signed is what is sent.
  const built = (await composer.compile().build()).toString("latin1").replace(/\r?\n/g, "\r\n");
  const message = `${addressed.join("\r\n")}\r\n${built}`;
  checkHeaderBlockSize(message.indexOf("\r\n\r\n"));
  return Buffer.from(message, "latin1");
}
