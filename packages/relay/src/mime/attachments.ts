import { Errors } from "../errors.js";

/** An attachment as a `/send` request gives it. */
export interface AttachmentInput {
  readonly filename: string;
  readonly content_type: string;
  /** The file's bytes in base64 (line breaks and spaces allowed, as encoders wrap it). */
  readonly content: string;
  /** Makes it an inline part the html refers to as `cid:<content_id>`. */
  readonly content_id?: string;
}

/** A checked attachment, decoded: what the MIME composer receives. */
export interface Attachment {
  readonly filename: string;
  readonly contentType: string;
  readonly content: Buffer;
  readonly contentId?: string;
}

/** Attachments per message. */
export const MAX_ATTACHMENTS = 100;

// `type/subtype` (RFC 2045 tokens), then optional `; name=value` parameters (token or quoted).
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const CONTENT_TYPE = new RegExp(
  `^${TOKEN}/${TOKEN}(?:\\s*;\\s*${TOKEN}=(?:${TOKEN}|"[^"\\\\\\r\\n]*"))*$`,
);
// multipart/* is structure the relay builds; message/* may not be base64-encoded (RFC 2046 §5.2).
const NOT_A_LEAF = /^(?:multipart|message)\//i;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the purpose.
const CONTROL = /[\u0000-\u001f\u007f]/;
// A Content-ID's content (RFC 2392 url-addr-spec): atext, dots and one `@`, without brackets.
const CONTENT_ID = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+(?:@[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+)?$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const BASE64_WHITESPACE = /[\r\n\t ]+/g;

/**
 * Checks and decodes the attachments of a `/send` request. An attachment with a `content_id`
 * is inline: `html` must refer to it as `cid:<content_id>` (compared without case, as mail
 * clients do). Throws `bad_attachment` naming the attachment (detail `attachment`: its index).
 */
export function checkAttachments(
  inputs: readonly AttachmentInput[],
  html: string | undefined,
): Attachment[] {
  const contentIds = new Set<string>();
  const lowerHtml = html?.toLowerCase();
  return inputs.map((input, index) => {
    const refuse = (problem: string) =>
      Errors.badAttachment(`attachment ${index} (${JSON.stringify(input.filename)}): ${problem}`, {
        attachment: index,
      });
    if (CONTROL.test(input.filename)) throw refuse("the filename contains a control character");
    if (!CONTENT_TYPE.test(input.content_type)) {
      throw refuse("content_type must be a MIME type, type/subtype with optional ;name=value");
    }
    if (NOT_A_LEAF.test(input.content_type)) {
      throw refuse("content_type may not be multipart/* or message/*");
    }
    const base64 = input.content.replace(BASE64_WHITESPACE, "");
    if (base64.length % 4 !== 0 || !BASE64.test(base64)) throw refuse("content is not base64");
    const { content_id: contentId } = input;
    if (contentId === undefined) {
      return {
        filename: input.filename,
        contentType: input.content_type,
        content: Buffer.from(base64, "base64"),
      };
    }
    if (!CONTENT_ID.test(contentId)) {
      throw refuse("content_id may hold letters, digits, dots, one @ and !#$%&'*+/=?^_`{|}~- only");
    }
    const lowerId = contentId.toLowerCase();
    if (contentIds.has(lowerId)) throw refuse(`content_id ${contentId} is used twice`);
    contentIds.add(lowerId);
    if (!lowerHtml?.includes(`cid:${lowerId}`)) {
      throw refuse(
        `content_id ${contentId} makes it inline, but the html never refers to cid:${contentId}`,
      );
    }
    return {
      filename: input.filename,
      contentType: input.content_type,
      content: Buffer.from(base64, "base64"),
      contentId,
    };
  });
}
