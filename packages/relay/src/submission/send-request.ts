import { type Static, Type } from "@sinclair/typebox";

// The wire shapes of `POST /send` and `POST /send-raw`, declared once for the routes and the
// submission service.

/** Recipients per send: each is one delivery, so an unbounded list is refused at the edge. */
export const MAX_RECIPIENTS = 1000;

const RecipientsSchema = Type.Array(Type.String({ minLength: 1 }), {
  minItems: 1,
  maxItems: MAX_RECIPIENTS,
  description: "recipients, one delivery each",
});

/** The fields of `POST /send`. */
export const SendFieldsSchema = Type.Object(
  {
    from: Type.String({
      description: "'Name <a@domain>' or 'a@domain'; the domain selects the DKIM kit",
    }),
    to: RecipientsSchema,
    subject: Type.String(),
    html: Type.Optional(Type.String({ description: "HTML body" })),
    text: Type.Optional(Type.String({ description: "plain-text body" })),
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
