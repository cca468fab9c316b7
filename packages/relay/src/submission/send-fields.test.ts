import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import { composeMessage, contentBytes, validateSendFields } from "./compose-message.js";
import { MAX_METADATA_BYTES, MAX_RECIPIENTS, type SendFields } from "./send-request.js";

const identity = { messageId: "<m1@shop.test>", date: new Date("2026-03-04T05:06:07Z") };
const base: SendFields = { from: "Loja <vendas@shop.test>", to: ["ana@dest.test"], subject: "Oi" };
const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 255]);

function headerBlock(message: Buffer): string {
  const text = message.toString("latin1");
  return text.slice(0, text.indexOf("\r\n\r\n"));
}

describe("cc, bcc and reply_to of /send", () => {
  it("delivers to, cc and bcc once per address, in that order", () => {
    const send = validateSendFields({
      ...base,
      to: ["ana@dest.test", "bia@dest.test"],
      cc: ["Bia <BIA@dest.test>", "caio@dest.test"],
      bcc: ["ana@dest.test", "dora@dest.test", "caio@dest.test"],
    });
    expect(send.recipients.map((r) => r.address)).toEqual([
      "ana@dest.test",
      "bia@dest.test",
      "caio@dest.test",
      "dora@dest.test",
    ]);
    expect(send.cc.map((r) => r.address)).toEqual(["caio@dest.test"]);
  });

  it("writes Cc and Reply-To, never Bcc", async () => {
    const send = validateSendFields({
      ...base,
      cc: ["Caio Ñ <caio@dest.test>"],
      bcc: ["hidden@dest.test"],
      reply_to: ["Suporte <help@shop.test>", "sac@shop.test"],
    });
    const message = await composeMessage(send, identity);
    expect(headerBlock(message)).not.toMatch(/bcc|hidden@dest\.test/i);
    expect(message.toString("latin1")).not.toContain("hidden@dest.test");
    const parsed = await simpleParser(message);
    expect(parsed.cc).toMatchObject({ value: [{ name: "Caio Ñ", address: "caio@dest.test" }] });
    expect(parsed.replyTo?.value).toEqual([
      { name: "Suporte", address: "help@shop.test" },
      { name: "", address: "sac@shop.test" },
    ]);
  });

  it("takes a single reply_to address", async () => {
    const parsed = await simpleParser(
      await composeMessage(validateSendFields({ ...base, reply_to: "help@shop.test" }), identity),
    );
    expect(parsed.replyTo?.text).toBe("help@shop.test");
  });

  it.each([
    ["cc", { cc: ["nope"] }, "bad_recipient"],
    ["bcc", { bcc: ["a@dest.test", "<>"] }, "bad_recipient"],
    ["reply_to", { reply_to: "help at shop" }, "bad_reply_to"],
    ["reply_to list", { reply_to: ["help@shop.test", "x"] }, "bad_reply_to"],
  ])("refuses an invalid %s address", (_case, fields, code) => {
    expect(() => validateSendFields({ ...base, ...fields })).toThrow(
      expect.objectContaining({ code, status: 400 }),
    );
  });

  it("refuses more than MAX_RECIPIENTS addresses across to, cc and bcc", () => {
    const many = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, i) => `${prefix}${i}@dest.test`);
    expect(() =>
      validateSendFields({ ...base, to: many("t", 600), bcc: many("b", MAX_RECIPIENTS - 599) }),
    ).toThrow(
      expect.objectContaining({ code: "bad_request", message: expect.stringMatching(/1000/) }),
    );
  });
});

describe("attachments of /send", () => {
  it("puts inline images with the html in multipart/related and files in multipart/mixed", async () => {
    const send = validateSendFields({
      ...base,
      text: "texto",
      html: '<p>logo: <img src="cid:logo@shop"></p>',
      attachments: [
        {
          filename: "logo.png",
          content_type: "image/png",
          content: png.toString("base64"),
          content_id: "logo@shop",
        },
        {
          filename: "relatório final.pdf",
          content_type: "application/pdf",
          content: png.toString("base64"),
        },
      ],
    });
    const message = await composeMessage(send, identity);
    const types = [...message.toString("latin1").matchAll(/^Content-Type: ([^;\r\n]+)/gim)].map(
      (match) => match[1],
    );
    expect(types).toEqual([
      "multipart/mixed",
      "multipart/alternative",
      "text/plain",
      "multipart/related",
      "text/html",
      "image/png",
      "application/pdf",
    ]);
    const parsed = await simpleParser(message);
    expect(
      parsed.attachments.map((a) => [a.filename, a.contentDisposition, a.cid, a.content]),
    ).toEqual([
      ["logo.png", "inline", "logo@shop", png],
      ["relatório final.pdf", "attachment", undefined, png],
    ]);
    expect(contentBytes(send)).toBe(5 + send.html!.length + 2 * png.length);
  });
});

describe("headers, tags and metadata of /send", () => {
  it("writes the custom headers after Subject", async () => {
    const send = validateSendFields({
      ...base,
      headers: { "X-Campaign": "spring", "List-Id": "<n.shop.test>" },
    });
    expect(headerBlock(await composeMessage(send, identity))).toContain(
      "Subject: Oi\r\nX-Campaign: spring\r\nList-Id: <n.shop.test>\r\n",
    );
  });

  it("keeps tags and metadata, and leaves them out of the message", async () => {
    const send = validateSendFields({ ...base, tags: ["welcome"], metadata: { user_id: "42" } });
    expect(send).toMatchObject({ tags: ["welcome"], metadata: { user_id: "42" } });
    const message = (await composeMessage(send, identity)).toString();
    expect(message).not.toMatch(/welcome|user_id/);
  });

  it("refuses metadata over MAX_METADATA_BYTES as JSON, and keys that are empty or too long", () => {
    const fits = { k: "v".repeat(MAX_METADATA_BYTES - '{"k":""}'.length) };
    expect(validateSendFields({ ...base, metadata: fits }).metadata).toBe(fits);
    const refused: Record<string, string>[] = [
      { k: `${fits.k}v` },
      { "": "v" },
      { ["k".repeat(65)]: "v" },
    ];
    for (const metadata of refused) {
      expect(() => validateSendFields({ ...base, metadata })).toThrow(
        expect.objectContaining({ code: "bad_metadata", status: 400 }),
      );
    }
  });
});

describe("a /send that uses none of the new fields", () => {
  // The literals are what the relay composed before cc, bcc, attachments … existed (checked
  // against that commit's compose-message.ts); MailComposer's random boundary is masked.
  it.each([
    [
      { from: "a@shop.test", to: ["b@dest.test"], subject: "Oi", text: "hello" },
      "From: a@shop.test\r\nTo: b@dest.test\r\nSubject: Oi\r\nMessage-ID: <m1@shop.test>\r\nDate: Wed, 04 Mar 2026 05:06:07 +0000\r\nContent-Transfer-Encoding: 7bit\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nhello\r\n",
    ],
    [
      {
        from: "Loja Ñandú <vendas@shop.test>",
        to: ["ana@dest.test", "Bia <bia@dest.test>"],
        subject: "Relatório de março",
        text: "Olá,\nsegue.",
        html: "<p>Olá</p>",
      },
      'From: =?UTF-8?B?TG9qYSDDkWFuZMO6?= <vendas@shop.test>\r\nTo: ana@dest.test, Bia <bia@dest.test>\r\nSubject: =?UTF-8?B?UmVsYXTDs3JpbyBkZSBtYXLDp28=?=\r\nMessage-ID: <m1@shop.test>\r\nDate: Wed, 04 Mar 2026 05:06:07 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative;\r\n boundary="B_1"\r\n\r\n--B_1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nOl=C3=A1,\r\nsegue.\r\n--B_1\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p>Ol=C3=A1</p>\r\n--B_1--\r\n',
    ],
  ])("is composed byte for byte as before (%#)", async (fields, before) => {
    const message = await composeMessage(validateSendFields(fields), identity);
    expect(message.toString("latin1").replace(/--_NmP-[0-9a-f]+-Part/g, "B")).toBe(before);
  });
});
