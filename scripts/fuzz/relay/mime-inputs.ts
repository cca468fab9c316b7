import { hostileString, longRun, randomUnicode } from "../hostile-values.js";
import type { Prng } from "../prng.js";

// Raw RFC 5322 messages and their mutations, for /send-raw and SMTP DATA: folded headers, missing
// separators, bare LF and CR, huge headers, odd encodings, repeated and malformed headers.

/** Continuation lines of one folded header at most (enough for the quadratic signer cost). */
const FOLDED_LINES_MAX = 40_000;

export interface Envelope {
  from: string;
  to: readonly string[];
}

const MUTATIONS: Array<(message: Message, random: Prng) => string> = [
  (m, r) => {
    m.headers.push(`X-Folded: a${"\r\n b".repeat(r.size(FOLDED_LINES_MAX))}`);
    return "folded header";
  },
  (m, r) => {
    m.headersOnly = r.pick(["", "\r\n"]);
    return "no header/body separator";
  },
  (m, r) => {
    m.lineEnding = r.pick(["\n", "\r", "\n\r", "\r\r\n"]);
    return "bare line endings";
  },
  (m, r) => {
    m.headers.push(`X-Huge: ${"x".repeat(r.size(2 * 1024 * 1024))}`);
    return "huge header line";
  },
  (m, r) => {
    for (let i = r.size(20_000); i > 0; i--) m.headers.push(`X-Many-${i}: v`);
    return "many headers";
  },
  (m, r) => {
    m.headers.push(
      `Subject: ${r.pick([
        "=?utf-8?B?####?=",
        "=?x-unknown?Q?=C3=A9?=",
        "=?utf-8?Q?=ZZ?=",
        "=?utf-8?B?",
        `=?utf-8?B?${Buffer.from(randomUnicode(r, 50)).toString("base64")}?=`,
        `=?utf-16?B?${r.bytes(r.size(300)).toString("base64")}?=`,
      ])}`,
    );
    m.headers = m.headers.filter(
      (header, index, all) => !header.startsWith("Subject:") || index === all.length - 1,
    );
    return "odd encoded words";
  },
  (m, r) => {
    m.headers.push(`X-Raw: ${r.bytes(r.size(500)).toString("latin1")}`);
    return "8-bit and control bytes in a header";
  },
  (m, r) => {
    m.headers.push(
      r.pick([
        "From: other@fuzz.test",
        "To: again@sink.test",
        "Subject: twice",
        "Message-ID: <dup@fuzz.test>",
        "Date: Mon, 1 Jan 2024 00:00:00 +0000",
      ]),
    );
    return "repeated header";
  },
  (m, r) => {
    m.headers = m.headers.map((header) =>
      header.startsWith("From:")
        ? `From: ${r.pick(["<>", "x@other.test", "Name <a@b@fuzz.test>", "fuzz@fuzz.test, b@fuzz.test", hostileString(r, 500), "=?utf-8?B?ZnV6ekBmdXp6LnRlc3Q=?="])}`
        : header,
    );
    return "odd From";
  },
  (m, r) => {
    m.headers = m.headers.filter(
      (header) =>
        !header.startsWith(r.pick(["From:", "To:", "Date:", "Message-ID:", "MIME-Version:"])),
    );
    return "missing header";
  },
  (m, r) => {
    m.headers.push(
      r.pick([
        "no colon here",
        ": empty name",
        "Bad Name: v",
        "X-\u0000: v",
        "X-Tab\t: v",
        `${"N".repeat(r.size(100_000))}: v`,
        " leading continuation",
        "Message-ID: no-brackets",
        `Message-ID: <${"m".repeat(r.size(100_000))}@fuzz.test>`,
      ]),
    );
    return "malformed header";
  },
  (m, r) => {
    const depth = r.size(400);
    m.headers = m.headers.filter((header) => !header.startsWith("Content-Type:"));
    m.headers.push('Content-Type: multipart/mixed; boundary="b0"');
    const openings = Array.from(
      { length: depth },
      (_, i) => `--b${i}\r\nContent-Type: multipart/mixed; boundary="b${i + 1}"\r\n\r\n`,
    ).join("");
    m.body = `${openings}deep\r\n`;
    return "deep or broken multipart";
  },
  (m, r) => {
    m.headers.push(
      `Content-Transfer-Encoding: ${r.pick(["base64", "quoted-printable", "x-uuencode", "8bit", "binary", "BASE64 "])}`,
    );
    m.body = r.pick([
      "!!!not base64!!!",
      "=ZZ=\r\n=",
      r.bytes(r.size(20_000)).toString("latin1"),
      longRun(r, 200_000),
    ]);
    return "body that breaks its encoding";
  },
  (m, r) => {
    m.body = r.pick([
      ".\r\n",
      "\r\n.\r\nMAIL FROM:<x@y>\r\n",
      "..\r\n.",
      "\n.\n",
      `${"l".repeat(r.size(3_000_000))}`,
      "\u0000".repeat(r.size(5000)),
    ]);
    return "body with dots, smuggling shapes or huge lines";
  },
];

interface Message {
  headers: string[];
  body: string;
  /** Set: the message ends after its headers, with this (no blank line, no body). */
  headersOnly: string | undefined;
  lineEnding: string;
}

/** A message from `envelope`, with one to three mutations; returns the text and what changed. */
export function rawMessage(envelope: Envelope, random: Prng): { text: string; summary: string } {
  const message: Message = {
    headers: [
      `From: Fuzz <${envelope.from}>`,
      `To: ${envelope.to.join(", ")}`,
      "Subject: fuzz",
      ...(random.chance(0.5)
        ? [`Message-ID: <${random.hex(16)}@${envelope.from.split("@")[1]}>`]
        : []),
      "MIME-Version: 1.0",
      "Content-Type: text/plain; charset=utf-8",
    ],
    body: "hello\r\n",
    headersOnly: undefined,
    lineEnding: "\r\n",
  };
  const changes = random.chance(0.15)
    ? ["unchanged"]
    : Array.from({ length: random.between(1, 3) }, () => random.pick(MUTATIONS)(message, random));
  const head = message.headers.join("\r\n");
  const text =
    message.headersOnly === undefined
      ? `${head}\r\n\r\n${message.body}`
      : `${head}${message.headersOnly}`;
  return {
    text: message.lineEnding === "\r\n" ? text : text.replaceAll("\r\n", message.lineEnding),
    summary: changes.join(", "),
  };
}
