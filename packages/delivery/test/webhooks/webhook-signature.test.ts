import { describe, expect, it } from "vitest";
import { hasValidSignature, signatureOf } from "../../src/webhooks/webhook-signature.js";

// The code host's published test vector (LIBRARY-NOTES.md, "Signature").
const VECTOR_SECRET = "It's a Secret to Everybody";
const VECTOR_BODY = "Hello, World!";
const VECTOR_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

describe("webhook signature", () => {
  it("matches the code host's published test vector", () => {
    expect(signatureOf(VECTOR_SECRET, VECTOR_BODY)).toBe(VECTOR_SIGNATURE);
    expect(hasValidSignature(VECTOR_SECRET, Buffer.from(VECTOR_BODY), VECTOR_SIGNATURE)).toBe(true);
  });

  it("accepts the digest in upper case", () => {
    const upper = `sha256=${VECTOR_SIGNATURE.slice("sha256=".length).toUpperCase()}`;
    expect(hasValidSignature(VECTOR_SECRET, Buffer.from(VECTOR_BODY), upper)).toBe(true);
  });

  it("refuses a signature made with another secret", () => {
    const forged = signatureOf("another secret", VECTOR_BODY);
    expect(hasValidSignature(VECTOR_SECRET, Buffer.from(VECTOR_BODY), forged)).toBe(false);
  });

  it("refuses a body changed by a single byte, even one that parses to the same JSON", () => {
    const signed = Buffer.from('{"action":"published"}');
    const reserialised = Buffer.from('{ "action": "published" }');
    const signature = signatureOf(VECTOR_SECRET, signed);
    expect(hasValidSignature(VECTOR_SECRET, signed, signature)).toBe(true);
    expect(hasValidSignature(VECTOR_SECRET, reserialised, signature)).toBe(false);
  });

  it("refuses a missing header, a bare digest, another algorithm and repeated headers", () => {
    const body = Buffer.from(VECTOR_BODY);
    const digest = VECTOR_SIGNATURE.slice("sha256=".length);
    expect(hasValidSignature(VECTOR_SECRET, body, undefined)).toBe(false);
    expect(hasValidSignature(VECTOR_SECRET, body, digest)).toBe(false);
    expect(hasValidSignature(VECTOR_SECRET, body, `sha1=${digest}`)).toBe(false);
    expect(hasValidSignature(VECTOR_SECRET, body, [VECTOR_SIGNATURE, VECTOR_SIGNATURE])).toBe(
      false,
    );
  });

  it("refuses everything when no secret is configured", () => {
    const body = Buffer.from(VECTOR_BODY);
    expect(hasValidSignature(undefined, body, signatureOf("", body))).toBe(false);
    expect(hasValidSignature(undefined, body, VECTOR_SIGNATURE)).toBe(false);
  });
});
