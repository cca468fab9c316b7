import { describe, expect, it } from "vitest";
import { allocWithHeadroom } from "../mime/headroom.js";
import { MAX_HEADER_BLOCK_BYTES } from "./header-limit.js";
import { type PreparedRawMessage, parseHeaderBlock, prepareRawMessage } from "./raw-message.js";

/** `bytes` copied into a Buffer with headroom in front of them. */
function withHeadroom(bytes: Buffer): Buffer {
  const copy = allocWithHeadroom(bytes.length);
  bytes.copy(copy);
  return copy;
}

/** The prepared message's octets, its parts put together. */
const whole = ({ message }: PreparedRawMessage) => Buffer.concat([message.head, message.body]);

const context = {
  envelopeDomain: "example.test",
  newMessageId: () => "<generated@example.test>",
  now: new Date("2026-03-04T05:06:07Z"),
};

const attachment = Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256))
  .toString("base64")
  .replace(/.{76}/g, "$&\r\n");

const complete = [
  "From: Ana <ana@example.test>",
  "To: bob@dest.test",
  "Subject: Report",
  "Date: Tue, 03 Mar 2026 10:00:00 +0000",
  "Message-ID: <client-id@example.test>",
  "X-Custom:   keep   this   spacing",
  "X-Folded: first",
  "\tsecond",
  "MIME-Version: 1.0",
  'Content-Type: multipart/mixed; boundary="b1"',
  "",
  "--b1",
  "Content-Type: text/plain",
  "",
  "hello",
  "--b1",
  "Content-Type: application/octet-stream",
  "Content-Transfer-Encoding: base64",
  "",
  attachment,
  "--b1--",
  "",
].join("\r\n");

describe("prepareRawMessage", () => {
  it("keeps a complete CRLF message byte for byte and its Message-ID as the key", () => {
    const prepared = prepareRawMessage(complete, context);
    expect(whole(prepared).toString("utf8")).toBe(complete);
    expect(prepared.messageId).toBe("<client-id@example.test>");
    expect(prepared.subjectLength).toBe("Report".length);
    expect(prepared.bodyBytes).toBe(complete.length - complete.indexOf("\r\n\r\n") - 4);
  });

  it("prepends Date and Message-ID when they are missing", () => {
    const raw = "From: ana@example.test\r\nSubject: x\r\n\r\nbody\r\n";
    const prepared = prepareRawMessage(raw, context);
    expect(prepared.messageId).toBe("<generated@example.test>");
    expect(whole(prepared).toString("utf8")).toBe(
      `Date: Wed, 04 Mar 2026 05:06:07 +0000\r\nMessage-ID: <generated@example.test>\r\n${raw}`,
    );
  });

  it("normalises bare LF and bare CR line endings to CRLF", () => {
    const raw =
      "From: ana@example.test\nDate: Tue, 03 Mar 2026 10:00:00 +0000\rMessage-ID: <a@b.test>\r\n\nline1\rline2\nline3\r\n";
    const prepared = prepareRawMessage(raw, context);
    expect(whole(prepared).toString("utf8")).toBe(
      "From: ana@example.test\r\nDate: Tue, 03 Mar 2026 10:00:00 +0000\r\nMessage-ID: <a@b.test>\r\n\r\nline1\r\nline2\r\nline3\r\n",
    );
  });

  it("refuses an empty or blank raw with empty_raw", () => {
    for (const raw of ["", " \r\n "]) {
      expect(() => prepareRawMessage(raw, context)).toThrow(
        expect.objectContaining({ code: "empty_raw", status: 400 }),
      );
    }
  });

  it.each(["From", "to", "SUBJECT", "Date", "Message-Id"])(
    "refuses a repeated %s header with repeated_header",
    (name) => {
      const raw = complete.replace("X-Custom:", `${name}: again@example.test\r\nX-Custom:`);
      expect(() => prepareRawMessage(raw, context)).toThrow(
        expect.objectContaining({ code: "repeated_header", status: 400 }),
      );
    },
  );

  it("allows other headers to repeat", () => {
    const raw = `Received: one\r\nReceived: two\r\n${complete}`;
    expect(whole(prepareRawMessage(raw, context)).toString("utf8")).toBe(raw);
  });

  it.each([
    ["another domain", "From: ana@other.test"],
    ["a subdomain", "From: ana@mail.example.test"],
    ["one of two addresses elsewhere", "From: ana@example.test, eve@other.test"],
    ["no address", "From: undisclosed"],
  ])("refuses a From header on %s with from_mismatch", (_, from) => {
    const raw = complete.replace("From: Ana <ana@example.test>", from);
    expect(() => prepareRawMessage(raw, context)).toThrow(
      expect.objectContaining({ code: "from_mismatch", status: 400 }),
    );
  });

  it("refuses a message without a From header with from_mismatch", () => {
    expect(() => prepareRawMessage("Subject: x\r\n\r\nbody", context)).toThrow(
      expect.objectContaining({ code: "from_mismatch" }),
    );
  });

  it("compares the From domain without regard to case and reads folded From headers", () => {
    const raw = complete.replace(
      "From: Ana <ana@example.test>",
      'From: "Ana"\r\n <ana@EXAMPLE.Test>',
    );
    expect(prepareRawMessage(raw, context).messageId).toBe("<client-id@example.test>");
  });

  it("refuses a header line that is not Name: value", () => {
    const raw = complete.replace("X-Custom:", "not a header\r\nX-Custom:");
    expect(() => prepareRawMessage(raw, context)).toThrow(
      expect.objectContaining({ code: "bad_message", status: 400 }),
    );
  });

  it.each([
    ["no final line break", "From: ana@example.test"],
    ["a final CRLF", "From: ana@example.test\r\nSubject: x\r\n"],
    ["LF line endings", "From: ana@example.test\nSubject: x\n"],
    ["CR line endings", "From: ana@example.test\rSubject: x"],
    ["a folded last field", "From: ana@example.test\r\nSubject: x\r\n y"],
  ])("gives a message that is all header (%s) the empty line of an empty body", (_case, raw) => {
    const prepared = prepareRawMessage(raw, context);
    const text = whole(prepared).toString("latin1");
    expect(text.endsWith("\r\n\r\n")).toBe(true);
    expect(text.indexOf("\r\n\r\n")).toBe(text.length - 4);
    expect(prepared.bodyBytes).toBe(0);
  });

  it("refuses a header block over MAX_HEADER_BLOCK_BYTES with headers_too_large, whatever its shape", () => {
    const over = MAX_HEADER_BLOCK_BYTES + 1;
    const shapes = [
      `X-Long: ${"x".repeat(over)}`,
      `X-Folded: a\r\n${" b\r\n".repeat(Math.ceil(over / 4))}`,
      "X-Many: a\r\n".repeat(Math.ceil(over / 11)),
    ];
    for (const shape of shapes) {
      expect(() =>
        prepareRawMessage(`From: ana@example.test\r\n${shape}\r\n\r\nbody`, context),
      ).toThrow(expect.objectContaining({ code: "headers_too_large", status: 400 }));
    }
    const within = `From: ana@example.test\r\nX-Folded: a\r\n${" b\r\n".repeat(200_000)}\r\nbody`;
    expect(prepareRawMessage(within, context).bodyBytes).toBe(4);
  });

  it("refuses a Message-ID without angle brackets", () => {
    const raw = complete.replace("<client-id@example.test>", "client-id@example.test");
    expect(() => prepareRawMessage(raw, context)).toThrow(
      expect.objectContaining({ code: "bad_message" }),
    );
  });
});

describe("parseHeaderBlock", () => {
  it("unfolds continuation lines and keeps names as written", () => {
    expect(parseHeaderBlock("Subject: a\r\n b\r\n\tc\r\nX-Y:z")).toEqual([
      { name: "Subject", value: "a b\tc" },
      { name: "X-Y", value: "z" },
    ]);
  });
});

describe("prepareRawMessage on bytes", () => {
  it("keeps octets that are not UTF-8 (an 8-bit latin1 body) unchanged", () => {
    const head = Buffer.from(
      "From: ana@example.test\nDate: Tue, 03 Mar 2026 10:00:00 +0000\nMessage-ID: <l1@example.test>\n" +
        "Content-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: 8bit\n\n",
    );
    const body = Buffer.from([0x4f, 0x6c, 0xe1, 0x0a, 0xff, 0xfe, 0x0d, 0x0a]);
    const prepared = prepareRawMessage(Buffer.concat([head, body]), context);
    const expectedHead = Buffer.from(head.toString("latin1").replace(/\n/g, "\r\n"), "latin1");
    expect(
      whole(prepared).equals(
        Buffer.concat([
          expectedHead,
          Buffer.from([0x4f, 0x6c, 0xe1, 0x0d, 0x0a, 0xff, 0xfe, 0x0d, 0x0a]),
        ]),
      ),
    ).toBe(true);
    expect(prepared.bodyBytes).toBe(9);
  });

  it.each([
    ["a plain Buffer: the head apart", (bytes: Buffer) => bytes, false],
    ["a Buffer with headroom: the head written into it", withHeadroom, true],
  ])("keeps a CRLF body where it is, in %s", (_, from, adjoining) => {
    const raw = from(
      Buffer.from(`From: ana@example.test\r\nSubject: x\r\n\r\n${"body\r\n".repeat(1000)}`),
    );
    const { head, body } = prepareRawMessage(raw, context).message;
    expect(head.toString("latin1")).toBe(
      "Date: Wed, 04 Mar 2026 05:06:07 +0000\r\nMessage-ID: <generated@example.test>\r\n" +
        "From: ana@example.test\r\nSubject: x\r\n\r\n",
    );
    expect(body.equals(raw.subarray(raw.indexOf("\r\n\r\n") + 4))).toBe(true);
    expect(body.buffer).toBe(raw.buffer);
    expect(head.buffer === raw.buffer && head.byteOffset + head.length === body.byteOffset).toBe(
      adjoining,
    );
  });

  it("encodes a JSON string as UTF-8", () => {
    const raw =
      "From: ana@example.test\r\nSubject: ação\r\nMessage-ID: <u@example.test>\r\nDate: x\r\n\r\nolá ✓\r\n";
    expect(whole(prepareRawMessage(raw, context)).equals(Buffer.from(raw, "utf8"))).toBe(true);
  });
});
