import { type Static, Type } from "@rd/common/typebox";
import { MAX_ATTACHMENTS } from "../mime/attachments.js";
import { MAX_CUSTOM_HEADERS } from "../mime/custom-headers.js";

// The wire shapes of `POST /send` and `POST /send-raw`, declared once for the routes and the
// submission service.

/** Recipients per send: each is one delivery, so an unbounded list is refused at the edge. */
export const MAX_RECIPIENTS = 1000;

const RecipientsSchema = Type.Array(Type.String({ minLength: 1 }), {
  minItems: 1,
  maxItems: MAX_RECIPIENTS,
  description: "recipients, one delivery each",
});

const CopyRecipientsSchema = (description: string) =>
  Type.Array(Type.String({ minLength: 1 }), { maxItems: MAX_RECIPIENTS, description });

/** Tags per message, and the length of one. */
export const MAX_TAGS = 10;
export const MAX_TAG_LENGTH = 64;
/** Metadata per message: its JSON text (`{"key":"value",…}`), in UTF-8 octets. */
export const MAX_METADATA_BYTES = 2048;
/** Reply-To addresses per message. */
export const MAX_REPLY_TO = 10;

const AttachmentSchema = Type.Object(
  {
    filename: Type.String({ minLength: 1, maxLength: 255 }),
    content_type: Type.String({
      minLength: 1,
      maxLength: 255,
      description: "MIME type, e.g. application/pdf or text/csv; charset=utf-8",
    }),
    content: Type.String({ description: "the file's bytes, base64" }),
    content_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          "inline part: the html refers to it as cid:<content_id> (the message becomes multipart/related)",
      }),
    ),
  },
  { additionalProperties: false },
);

/** The fields of `POST /send`; everything after `text` is optional and absent means as before. */
export const SendFieldsSchema = Type.Object(
  {
    from: Type.String({
      description: "'Name <a@domain>' or 'a@domain'; the domain selects the DKIM kit",
    }),
    to: RecipientsSchema,
    subject: Type.String(),
    html: Type.Optional(Type.String({ description: "HTML body" })),
    text: Type.Optional(Type.String({ description: "plain-text body" })),
    cc: Type.Optional(CopyRecipientsSchema("copy recipients, in the Cc header; one delivery each")),
    bcc: Type.Optional(
      CopyRecipientsSchema("blind copy recipients: envelope only, never in a header"),
    ),
    reply_to: Type.Optional(
      Type.Union(
        [
          Type.String({ minLength: 1 }),
          Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_REPLY_TO }),
        ],
        { description: "Reply-To: one address or a list, 'Name <a@domain>' or 'a@domain'" },
      ),
    ),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        maxProperties: MAX_CUSTOM_HEADERS,
        description:
          "custom header fields, name → value; addressing, Subject, Date, Message-ID, MIME-Version, Content-*, DKIM-Signature and trace headers are refused (header_not_allowed)",
      }),
    ),
    attachments: Type.Optional(Type.Array(AttachmentSchema, { maxItems: MAX_ATTACHMENTS })),
    tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MAX_TAG_LENGTH }), {
        maxItems: MAX_TAGS,
        uniqueItems: true,
        description: "the sender's labels, kept with the message (ledger)",
      }),
    ),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: `flat string map kept with the message (ledger); at most ${MAX_METADATA_BYTES} octets as JSON`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type SendFields = Static<typeof SendFieldsSchema>;

/** The body of `POST /send-raw`: a ready message and its envelope. */
export const SendRawBodySchema = Type.Object(
  {
    from: Type.String({ description: "envelope sender; defines the domain and its DKIM kit" }),
    to: RecipientsSchema,
    raw: Type.String({ description: "the complete RFC 5322 message" }),
  },
  { additionalProperties: false },
);
