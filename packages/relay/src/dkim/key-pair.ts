import { createPrivateKey, createPublicKey, generateKeyPair } from "node:crypto";
import { promisify } from "node:util";

const generate = promisify(generateKeyPair);

// DKIM keys are RSA-2048 (specification, "Domain").
export const DKIM_KEY_BITS = 2048;

/** A new RSA-2048 private key in PKCS#8 PEM; generated off the main thread. */
export async function generateDkimPrivateKey(): Promise<string> {
  const { privateKey } = await generate("rsa", {
    modulusLength: DKIM_KEY_BITS,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return privateKey;
}

/**
 * The public key as published in a DKIM record: SubjectPublicKeyInfo (SPKI), DER, base64,
 * without PEM armour. Accepts a PKCS#1 or PKCS#8 private key.
 */
export function spkiPublicKeyBase64(privateKeyPem: string): string {
  const publicKey = createPublicKey(createPrivateKey(privateKeyPem));
  return publicKey.export({ type: "spki", format: "der" }).toString("base64");
}
