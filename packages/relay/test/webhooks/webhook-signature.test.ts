import { describe, expect, it } from "vitest";
import { signatureHeader } from "../../src/webhooks/webhook-signature.js";
import { readmeVerifier } from "./readme-verifier.js";

describe("the README's signature verification", () => {
  const secret = "whsec_test-secret";
  const body = '{"id":"evt_1","type":"delivered","rcpt":"ana@example.org"}';
  const now = () => Math.floor(Date.now() / 1000);

  it("accepts what the relay signs, as a string or as the raw bytes", async () => {
    const verify = await readmeVerifier();
    const header = signatureHeader(secret, body, now());
    expect(verify(secret, header, body)).toBe(true);
    expect(verify(secret, header, Buffer.from(body))).toBe(true);
  });

  it("refuses another secret, a changed body, a changed or stale timestamp", async () => {
    const verify = await readmeVerifier();
    const t = now();
    const header = signatureHeader(secret, body, t);
    expect(verify("whsec_other", header, body)).toBe(false);
    expect(verify(secret, header, body.replace("ana", "bob"))).toBe(false);
    expect(verify(secret, header.replace(`t=${t}`, `t=${t + 1}`), body)).toBe(false);
    expect(verify(secret, signatureHeader(secret, body, t - 600), body)).toBe(false);
    expect(verify(secret, "v1=00", body)).toBe(false);
  });

  it("signs `<t>.<body>` with HMAC-SHA256 (a vector computed with openssl dgst -hmac)", () => {
    expect(signatureHeader("It's a Secret to Everybody", "Hello, World!", 1700000000)).toBe(
      "t=1700000000,v1=76c83fd0acdf22faed320674fe8e04d528cfe8a17905e720a9611e40677c03b7",
    );
  });
});
