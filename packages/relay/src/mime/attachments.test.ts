import { describe, expect, it } from "vitest";
import { type AttachmentInput, checkAttachments } from "./attachments.js";

const pdf: AttachmentInput = {
  filename: "relatório.pdf",
  content_type: "application/pdf",
  content: Buffer.from("%PDF-1.4 bytes").toString("base64"),
};

describe("attachments of /send", () => {
  it("decodes base64 content, line breaks and spaces included", () => {
    const wrapped = Buffer.alloc(200, 7).toString("base64").replace(/.{76}/g, "$&\r\n");
    const [attachment] = checkAttachments([{ ...pdf, content: wrapped }], undefined);
    expect(attachment?.content).toEqual(Buffer.alloc(200, 7));
  });

  it("accepts content types with parameters and an inline part the html refers to", () => {
    const checked = checkAttachments(
      [
        { ...pdf, content_type: 'text/csv; charset=utf-8; header="present"' },
        { ...pdf, content_type: "image/png", content_id: "Logo.1@shop" },
      ],
      '<img src="cid:logo.1@shop">',
    );
    expect(checked.map((a) => a.contentId)).toEqual([undefined, "Logo.1@shop"]);
  });

  it.each([
    ["content that is not base64", { ...pdf, content: "not base64!" }],
    ["base64 of the wrong length", { ...pdf, content: "QUJDR" }],
    ["padding inside the content", { ...pdf, content: "QQ==QUJD" }],
    ["a content type without subtype", { ...pdf, content_type: "pdf" }],
    ["a multipart content type", { ...pdf, content_type: "multipart/mixed" }],
    ["a message content type", { ...pdf, content_type: "message/rfc822" }],
    ["a filename with a line break", { ...pdf, filename: "a\r\nb.pdf" }],
    ["a content_id with brackets", { ...pdf, content_id: "<logo@shop>" }],
    ["a content_id the html never refers to", { ...pdf, content_id: "other@shop" }],
  ])("refuses %s with bad_attachment naming the attachment", (_case, second) => {
    expect(() => checkAttachments([pdf, second], '<img src="cid:logo@shop">')).toThrow(
      expect.objectContaining({
        code: "bad_attachment",
        status: 400,
        details: { attachment: 1 },
        message: expect.stringMatching(/^attachment 1 \(/),
      }),
    );
  });

  it("refuses an inline part without html, and a content_id used twice", () => {
    const inline = { ...pdf, content_id: "logo@shop" };
    expect(() => checkAttachments([inline], undefined)).toThrow(
      expect.objectContaining({ code: "bad_attachment" }),
    );
    expect(() => checkAttachments([inline, inline], "cid:logo@shop")).toThrow(
      expect.objectContaining({
        code: "bad_attachment",
        message: expect.stringContaining("twice"),
      }),
    );
  });
});
