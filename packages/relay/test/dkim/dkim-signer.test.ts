import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { dkimVerify } from "mailauth";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDkimSigner, SIGNED_HEADERS } from "../../src/dkim/dkim-signer.js";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { asciiBytesOf, parseWithLongStrings } from "../../src/http/long-json-strings.js";
import { messageParts } from "../../src/mime/message-parts.js";
import { prepareRawMessage } from "../../src/submission/raw-message.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";

function rsaKeyPair() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const spki = publicKey.export({ type: "spki", format: "der" }).toString("base64");
  // NOTE: a 2048-bit key's record exceeds 255 characters: published as several strings.
  const txt = `v=DKIM1; k=rsa; p=${spki}`.match(/.{1,255}/g) ?? [];
  return { pem, txt };
}

const message = Buffer.from(
  [
    "From: Ana <ana@example.test>",
    "To: bob@dest.test",
    "Cc: carla@dest.test",
    "Subject: Signed",
    "Date: Tue, 03 Mar 2026 10:00:00 +0000",
    "Message-ID: <m1@example.test>",
    "X-Unsigned: not covered",
    "MIME-Version: 1.0",
    "Content-Type: text/plain; charset=utf-8",
    "",
    "Body line   with  spaces   ",
    "",
    "",
  ].join("\r\n"),
);

describe("createDkimSigner", () => {
  let dns: DnsServer;
  let dir: { path: string; remove(): Promise<void> };
  const first = rsaKeyPair();
  const second = rsaKeyPair();

  beforeAll(async () => {
    dir = await makeTempDir();
    dns = await startDnsServer({ "relay._domainkey.example.test": { TXT: [first.txt] } });
  });
  afterAll(async () => {
    await dns.close();
    await dir.remove();
  });

  async function verify(signed: Buffer) {
    const { resolve } = createDnsResolver(dns.address);
    const result = await dkimVerify(signed, { resolver: resolve as never });
    return result.results;
  }

  /** Signs `message` as relay._domainkey.example.test with the first key, written to `file`. */
  async function signAtFixedTime(file: string) {
    const keyPath = join(dir.path, file);
    await writeFile(keyPath, first.pem);
    const signer = createDkimSigner({ now: () => new Date("2026-03-04T00:00:00Z") });
    return signer.sign(message, { domain: "example.test", selector: "relay", keyPath });
  }

  it("signs rsa-sha256 relaxed/relaxed with d= and s=, verified by mailauth against DNS", async () => {
    const signed = await signAtFixedTime("example.test.pem");

    expect(signed.subarray(signed.length - message.length).equals(message)).toBe(true);
    const header = signed.subarray(0, signed.length - message.length).toString();
    expect(header).toMatch(/^DKIM-Signature: /);
    expect(header).toContain("a=rsa-sha256");
    expect(header).toContain("c=relaxed/relaxed");
    expect(header).toContain("d=example.test");
    expect(header).toContain("s=relay");
    const signedHeaders = /h=([^;]+);/.exec(header.replace(/\r\n\s+/g, ""))?.[1]?.split(":");
    expect(signedHeaders?.map((h) => h.trim().toLowerCase()).sort()).toEqual(
      ["from", "to", "cc", "subject", "date", "message-id", "mime-version", "content-type"].sort(),
    );

    const [result] = await verify(signed);
    expect(result?.status.result).toBe("pass");
    expect(result?.signingDomain).toBe("example.test");
  });

  it("writes the header in mailauth's shape: tag order, h= bottom-up as written, b= spaced, folded at 76", async () => {
    const signed = await signAtFixedTime("shape.pem");
    const header = signed.subarray(0, signed.length - message.length).toString();
    const lines = header.split("\r\n");
    expect(lines.at(-1)).toBe("");
    expect(lines.slice(0, -1).every((line) => line.length <= 76)).toBe(true);
    const unfolded = header.replace(/\r\n/g, "");
    expect(unfolded).toMatch(
      /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.test; h=Content-Type: MIME-Version: Message-ID: Date: Subject: Cc: To: From; q=dns\/txt; s=relay; t=1772582400; bh=[A-Za-z0-9+/=]{44}; b=[A-Za-z0-9+/= ]+$/,
    );
    expect(
      /b=(.*)$/
        .exec(unfolded)?.[1]
        ?.split(" ")
        .slice(0, -1)
        .every((part) => part.length === 75 || part.length === 73),
    ).toBe(true);
  });

  it("signs a message given as head and body exactly as it signs it whole", async () => {
    const keyPath = join(dir.path, "parts.pem");
    await writeFile(keyPath, first.pem);
    const signer = createDkimSigner({ now: () => new Date("2026-03-04T00:00:00Z") });
    const identity = { domain: "example.test", selector: "relay", keyPath };
    const headerOnly = Buffer.from("From: a@example.test\r\nSubject: none\r\n\r\n");
    for (const input of [message, headerOnly]) {
      const parts = messageParts(input);
      expect(Buffer.concat([parts.head, parts.body]).equals(input)).toBe(true);
      const fromParts = await signer.sign(parts, identity);
      expect(fromParts.equals(await signer.sign(input, identity))).toBe(true);
      expect((await verify(fromParts))[0]?.status.result).toBe("pass");
    }
    expect(messageParts(headerOnly).body.length).toBe(0);
  });

  it("signs a long /send-raw message where the JSON decoder wrote it, without copying it", async () => {
    const keyPath = join(dir.path, "in-place.pem");
    await writeFile(keyPath, first.pem);
    const signer = createDkimSigner({ now: () => new Date("2026-03-04T00:00:00Z") });
    const raw = `From: a@example.test\r\nSubject: long\r\n\r\n${"x".repeat(76).concat("\r\n").repeat(2000)}`;
    const parsed = parseWithLongStrings(Buffer.from(JSON.stringify({ raw }))) as object;
    const decoded = asciiBytesOf(parsed, "raw") as Buffer;
    const prepared = prepareRawMessage(decoded, {
      envelopeDomain: "example.test",
      newMessageId: () => "<long@example.test>",
      now: new Date("2026-03-04T00:00:00Z"),
    });
    const signed = await signer.sign(prepared.message, {
      domain: "example.test",
      selector: "relay",
      keyPath,
    });
    expect(signed.buffer).toBe(decoded.buffer);
    // The headers the relay adds, then the message as the client wrote it.
    expect(signed.toString("latin1")).toMatch(
      /^DKIM-Signature: .*\r\nDate: .*\r\nMessage-ID: <long@example.test>\r\n/s,
    );
    expect(signed.subarray(signed.length - decoded.length).equals(decoded)).toBe(true);
    expect(decoded.toString("latin1")).toBe(raw);
    expect((await verify(signed))[0]?.status.result).toBe("pass");
  });

  it("signs in time linear in the number of folded header lines", async () => {
    const keyPath = join(dir.path, "linear.pem");
    await writeFile(keyPath, first.pem);
    const signer = createDkimSigner();
    const identity = { domain: "example.test", selector: "relay", keyPath };
    const folded = (lines: number) =>
      Buffer.from(`From: a@example.test\r\nX-Junk: a\r\n${" b\r\n".repeat(lines)}\r\nbody\r\n`);
    const small = folded(100_000);
    const large = folded(400_000);
    await signer.sign(small, identity); // warm-up (and the key is parsed)
    const timeOf = async (input: Buffer) => {
      let best = Number.POSITIVE_INFINITY;
      for (let run = 0; run < 5; run += 1) {
        const started = performance.now();
        await signer.sign(input, identity);
        best = Math.min(best, performance.now() - started);
      }
      return best;
    };
    const [smallMs, largeMs] = [await timeOf(small), await timeOf(large)];
    // mailauth 4.x took seconds for 40,000 lines, and four times as long for twice as many:
    // four times the lines must cost about four times as long (16 would be quadratic), with
    // room for a loaded machine's noise.
    expect(largeMs).toBeLessThan(500);
    expect(largeMs / Math.max(smallMs, 5)).toBeLessThan(8);
    // (mailauth's verifier shares the quadratic parser: such messages are verified by dkimpy in
    // test/send/dkim-independent.test.ts.)
  });

  it("names exactly the decided header list", () => {
    expect(SIGNED_HEADERS).toEqual([
      "From",
      "To",
      "Cc",
      "Subject",
      "Date",
      "Message-ID",
      "MIME-Version",
      "Content-Type",
      "Reply-To",
      "In-Reply-To",
      "References",
    ]);
  });

  it("reads a key once, and again only after its path is no longer retained", async () => {
    const keyPath = join(dir.path, "cached.pem");
    await writeFile(keyPath, first.pem);
    const reads: string[] = [];
    const signer = createDkimSigner({
      readKey: async (path) => {
        reads.push(path);
        const { readFile } = await import("node:fs/promises");
        return readFile(path);
      },
    });
    const identity = { domain: "example.test", selector: "relay", keyPath };
    await Promise.all([signer.sign(message, identity), signer.sign(message, identity)]);
    signer.retain([keyPath]);
    await signer.sign(message, identity);
    expect(reads).toEqual([keyPath]);

    // The domain is recreated with a new key at the same path.
    await writeFile(keyPath, second.pem);
    dns.setZone({ "relay._domainkey.example.test": { TXT: [second.txt] } });
    const stale = await signer.sign(message, identity);
    expect((await verify(stale))[0]?.status.result).toBe("fail");
    signer.retain([join(dir.path, "other.pem")]);
    const fresh = await signer.sign(message, identity);
    expect((await verify(fresh))[0]?.status.result).toBe("pass");
    expect(reads).toEqual([keyPath, keyPath]);
    dns.setZone({ "relay._domainkey.example.test": { TXT: [first.txt] } });
  });

  it("fails with signing_failed when the key is missing, and retries the file next time", async () => {
    const keyPath = join(dir.path, "late.pem");
    const signer = createDkimSigner();
    const identity = { domain: "example.test", selector: "relay", keyPath };
    await expect(signer.sign(message, identity)).rejects.toMatchObject({
      code: "signing_failed",
      status: 500,
    });
    await writeFile(keyPath, first.pem);
    await expect(signer.sign(message, identity)).resolves.toBeInstanceOf(Buffer);
  });

  it("fails with signing_failed when the file is not a private key", async () => {
    const keyPath = join(dir.path, "garbage.pem");
    await writeFile(keyPath, "not a key");
    await expect(
      createDkimSigner().sign(message, { domain: "example.test", selector: "relay", keyPath }),
    ).rejects.toMatchObject({ code: "signing_failed" });
  });
});
