import { simpleParser } from "mailparser";
import { describe, expect, it } from "vitest";
import {
  composeMessage,
  QUOTED_PRINTABLE_MAX_BYTES,
  validateSendFields,
} from "./compose-message.js";
import { MAX_HEADER_BLOCK_BYTES } from "./header-limit.js";

const identity = { messageId: "<m1@example.test>", date: new Date("2026-03-04T05:06:07Z") };

async function compose(fields: Partial<Parameters<typeof validateSendFields>[0]> = {}) {
  const send = validateSendFields({
    from: "Ana <ana@example.test>",
    to: ["bob@dest.test"],
    subject: "Hello",
    ...fields,
  });
  return (await composeMessage(send, identity)).toString("utf8");
}

function headerBlock(message: string): string {
  return message.slice(0, message.indexOf("\r\n\r\n"));
}

describe("validateSendFields", () => {
  it("refuses a from without a domain with bad_from", () => {
    expect(() => validateSendFields({ from: "ana", to: ["b@dest.test"], subject: "" })).toThrow(
      expect.objectContaining({ code: "bad_from", status: 400 }),
    );
  });

  it("refuses an invalid recipient with bad_recipient", () => {
    expect(() =>
      validateSendFields({ from: "a@example.test", to: ["b@dest.test", "nope"], subject: "" }),
    ).toThrow(expect.objectContaining({ code: "bad_recipient", status: 400 }));
  });

  it("keeps one delivery per recipient address", () => {
    const send = validateSendFields({
      from: "a@example.test",
      to: ["b@dest.test", "Bob <B@DEST.test>", "c@dest.test"],
      subject: "",
    });
    expect(send.to.map((r) => r.address)).toEqual(["b@dest.test", "c@dest.test"]);
  });
});

describe("composeMessage", () => {
  it("writes From, To, Subject, Date and the given Message-ID with CRLF line endings", async () => {
    const message = await compose({ to: ["bob@dest.test", "Carla <carla@other.test>"] });
    const headers = headerBlock(message);
    expect(headers).toContain("From: Ana <ana@example.test>\r\n");
    expect(headers).toContain("To: bob@dest.test, Carla <carla@other.test>\r\n");
    expect(headers).toContain("Subject: Hello\r\n");
    expect(headers).toContain("Message-ID: <m1@example.test>\r\n");
    expect(headers).toContain("Date: Wed, 04 Mar 2026 05:06:07 +0000");
    expect(message.replace(/\r\n/g, "")).not.toMatch(/[\r\n]/);
  });

  it("gives a single text/plain part for text only", async () => {
    const parsed = await simpleParser(await compose({ text: "só texto\nlinha 2" }));
    expect(parsed.headers.get("content-type")).toMatchObject({ value: "text/plain" });
    // The single part ends with the line break that closes its last line.
    expect(parsed.text).toBe("só texto\nlinha 2\n");
    expect(parsed.html).toBe(false);
  });

  it("gives a single text/html part for html only", async () => {
    const parsed = await simpleParser(await compose({ html: "<p>olá</p>" }));
    expect(parsed.headers.get("content-type")).toMatchObject({ value: "text/html" });
    expect(parsed.html).toBe("<p>olá</p>\n");
  });

  it("gives multipart/alternative for html and text", async () => {
    const parsed = await simpleParser(await compose({ text: "plain ü", html: "<b>rich ü</b>" }));
    expect(parsed.headers.get("content-type")).toMatchObject({ value: "multipart/alternative" });
    expect(parsed.text).toBe("plain ü");
    expect(parsed.html).toBe("<b>rich ü</b>");
  });

  it("gives an empty text/plain body when neither is given", async () => {
    const message = await compose();
    const parsed = await simpleParser(message);
    expect(parsed.headers.get("content-type")).toMatchObject({ value: "text/plain" });
    expect(message.slice(message.indexOf("\r\n\r\n") + 4)).toBe("");
  });

  it("encodes a UTF-8 subject and display name so that they decode back", async () => {
    const subject = "Relatório — ação ✓ 日本語 with a long tail to force folding of encoded words";
    const message = await compose({ from: "José Ñandú <j@example.test>", subject });
    expect(headerBlock(message)).toMatch(/^[\x20-\x7e\r\n\t]*$/);
    const parsed = await simpleParser(message);
    expect(parsed.subject).toBe(subject);
    expect(parsed.from?.value).toEqual([{ name: "José Ñandú", address: "j@example.test" }]);
  });

  it.each([
    ["a long ASCII subject", { subject: "x".repeat(5000) }],
    ["a long ASCII display name", { from: `${"A".repeat(3000)} <ana@example.test>` }],
    ["a long dotted display name", { to: [`${"b.".repeat(1500)} <bob@dest.test>`] }],
    ["a long UTF-8 subject", { subject: "é".repeat(100_000) }],
  ])("folds %s within 78-character lines that decode back", async (_case, fields) => {
    const message = await compose(fields);
    expect(
      headerBlock(message)
        .split("\r\n")
        .every((line) => line.length <= 78),
    ).toBe(true);
    const parsed = await simpleParser(message);
    if ("subject" in fields) expect(parsed.subject).toBe(fields.subject);
    if ("from" in fields) expect(parsed.from?.value[0]?.name).toBe("A".repeat(3000));
    if ("to" in fields)
      expect(parsed.headers.get("to")).toMatchObject({ value: [{ name: "b.".repeat(1500) }] });
  });

  it.each([
    ["a subject over the limit before encoding", "x".repeat(MAX_HEADER_BLOCK_BYTES + 1)],
    ["a subject over the limit once encoded", "é".repeat(MAX_HEADER_BLOCK_BYTES / 3)],
  ])("refuses %s with headers_too_large", async (_case, subject) => {
    await expect(compose({ subject })).rejects.toMatchObject({
      code: "headers_too_large",
      status: 400,
    });
  });

  it("cannot be made to inject a header through the subject", async () => {
    const message = await compose({ subject: "hi\r\nBcc: evil@attacker.test" });
    expect(headerBlock(message)).not.toMatch(/^Bcc:/im);
  });
});

describe("composeMessage body encoding", () => {
  it("keeps quoted-printable up to the threshold and base64 above it, both decoding back", async () => {
    const line = "Linha de texto com acentuação, repetida para ocupar espaço.\n";
    const small = line.repeat(Math.floor(QUOTED_PRINTABLE_MAX_BYTES / Buffer.byteLength(line)) - 1);
    const large = line.repeat(
      Math.ceil((QUOTED_PRINTABLE_MAX_BYTES * 2) / Buffer.byteLength(line)),
    );
    for (const [text, encoding] of [
      [small, "quoted-printable"],
      [large, "base64"],
    ] as const) {
      const message = await compose({ text });
      expect(message).toContain(`Content-Transfer-Encoding: ${encoding}\r\n`);
      const parsed = await simpleParser(message);
      expect(parsed.text).toBe(text);
    }
  });
});
