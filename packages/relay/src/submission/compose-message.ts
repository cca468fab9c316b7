import { Errors } from "../errors.js";
import { type Attachment, checkAttachments } from "../mime/attachments.js";
import { customHeaderFields } from "../mime/custom-headers.js";
import { mailboxListField, unstructuredField } from "../mime/header-encoding.js";
import { checkHeaderBlockSize } from "./header-limit.js";
import { type Mailbox, parseMailbox } from "./mailbox.js";
import { checkMetadata } from "./message-labels.js";
import { MAX_RECIPIENTS, type SendFields } from "./send-request.js";

/** `/send` fields once validated: parsed addresses (duplicates removed), checked extras. */
export interface ValidatedSend {
  readonly from: Mailbox;
  readonly to: readonly Mailbox[];
  /** Cc header; addresses already in `to` are left out. */
  readonly cc: readonly Mailbox[];
  readonly replyTo: readonly Mailbox[];
  /** Every envelope recipient, one per address: to, cc and bcc (bcc is in no header). */
  readonly recipients: readonly Mailbox[];
  readonly subject: string;
  readonly html?: string;
  readonly text?: string;
  /** The caller's custom header fields, formatted and folded. */
  readonly headerFields: readonly string[];
  readonly attachments: readonly Attachment[];
  readonly tags?: readonly string[];
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * Checks the fields of `/send`; throws `bad_from`, `bad_recipient`, `bad_reply_to`,
 * `header_not_allowed`, `bad_header`, `bad_attachment`, `bad_metadata`, or `bad_request` when
 * to, cc and bcc hold more than MAX_RECIPIENTS addresses together.
 */
export function validateSendFields(fields: SendFields): ValidatedSend {
  const from = parseMailbox(fields.from);
  if (!from) throw Errors.badFrom();
  const seen = new Set<string>();
  const to = uniqueRecipients(fields.to, seen);
  const cc = uniqueRecipients(fields.cc ?? [], seen);
  const bcc = uniqueRecipients(fields.bcc ?? [], seen);
  const recipients = [...to, ...cc, ...bcc];
  if (recipients.length > MAX_RECIPIENTS) {
    throw Errors.badRequest(
      `at most ${MAX_RECIPIENTS} recipients per request, to, cc and bcc together (${recipients.length} given)`,
    );
  }
  const replyTo = [fields.reply_to ?? []].flat().map((value) => {
    const mailbox = parseMailbox(value);
    if (!mailbox) throw Errors.badReplyTo(`invalid reply_to address: ${JSON.stringify(value)}`);
    return mailbox;
  });
  return {
    from,
    to,
    cc,
    replyTo,
    recipients,
    subject: fields.subject,
    ...(fields.html !== undefined && { html: fields.html }),
    ...(fields.text !== undefined && { text: fields.text }),
    headerFields: customHeaderFields(fields.headers ?? {}),
    attachments: checkAttachments(fields.attachments ?? [], fields.html),
    ...(fields.tags && { tags: fields.tags }),
    ...(fields.metadata && { metadata: checkMetadata(fields.metadata) }),
  };
}

/**
 * Parses recipients (`Name <a@domain>` or `a@domain`) and drops repeats of the same address
 * (also those already in `seen`, which it extends), so that one recipient gets one delivery
 * and counts once against the quota.
 */
export function uniqueRecipients(
  values: readonly string[],
  seen: Set<string> = new Set(),
): Mailbox[] {
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

/** The octets of a send's content: text, html and the attachments' decoded bytes. */
export function contentBytes(send: ValidatedSend): number {
  return send.attachments.reduce(
    (sum, attachment) => sum + attachment.content.length,
    Buffer.byteLength(send.text ?? "") + Buffer.byteLength(send.html ?? ""),
  );
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
 * neither → an empty text/plain body. Inline attachments (content_id) join the html in
 * multipart/related, the others make the whole multipart/mixed (MailComposer's layout).
 * From, To, Cc, Reply-To, Subject and the custom headers are written by `mime/` (folded within
 * RFC 5322's line limit), the rest by nodemailer's MailComposer. Bcc is never written.
 * Throws `headers_too_large` when the header block would pass `MAX_HEADER_BLOCK_BYTES`.
 */
export async function composeMessage(
  send: ValidatedSend,
  identity: { readonly messageId: string; readonly date: Date },
): Promise<Buffer> {
  // Encoding only makes text longer: what is over the limit already is refused unencoded.
  checkHeaderBlockSize(
    Buffer.byteLength(send.subject) +
      [send.from, ...send.to, ...send.cc, ...send.replyTo].reduce(
        (sum, { name }) => sum + Buffer.byteLength(name ?? ""),
        0,
      ) +
      send.headerFields.reduce((sum, field) => sum + field.length, 0),
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
    ...(send.attachments.length > 0 && { attachments: send.attachments.map(mimeAttachment) }),
    messageId: identity.messageId,
    date: identity.date,
    // The content is data, never a path or URL to fetch.
    disableFileAccess: true,
    disableUrlAccess: true,
  });
  const addressed = [
    mailboxListField("From", [send.from]),
    mailboxListField("To", send.to),
    ...(send.cc.length > 0 ? [mailboxListField("Cc", send.cc)] : []),
    ...(send.replyTo.length > 0 ? [mailboxListField("Reply-To", send.replyTo)] : []),
    // Like MailComposer, no Subject field for a blank subject.
    ...(send.subject.trim() === "" ? [] : [unstructuredField("Subject", send.subject)]),
    ...send.headerFields,
  ];
  // NOTE: MailComposer keeps the text's bare LFs in quoted-printable bodies. They become CRLF
  // on the wire (SMTP data), so they become CRLF here: what is signed is what is sent.
  const built = (await composer.compile().build()).toString("latin1").replace(/\r?\n/g, "\r\n");
  const message = `${addressed.join("\r\n")}\r\n${built}`;
  checkHeaderBlockSize(message.indexOf("\r\n\r\n"));
  return Buffer.from(message, "latin1");
}

/** An attachment as MailComposer takes it: always base64, inline exactly when it has a cid. */
function mimeAttachment(attachment: Attachment) {
  return {
    filename: attachment.filename,
    contentType: attachment.contentType,
    content: attachment.content,
    contentTransferEncoding: "base64" as const,
    contentDisposition:
      attachment.contentId === undefined ? ("attachment" as const) : ("inline" as const),
    ...(attachment.contentId !== undefined && { cid: attachment.contentId }),
  };
}
