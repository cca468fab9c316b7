import { generateKeyPair } from "node:crypto";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { ConfigError } from "@rd/common";
import type selfsigned from "selfsigned";

/** PEM key and certificate the port presents after STARTTLS. */
export interface TlsCertificate {
  readonly key: string;
  readonly cert: string;
}

// A generated certificate is valid this long; a new one is made at every boot anyway.
const SELF_SIGNED_DAYS = 365;
const SELF_SIGNED_KEY_BITS = 2048;

/**
 * The STARTTLS certificate: `smtp_tls_cert` + `smtp_tls_key` when configured (both or neither),
 * otherwise a fresh self-signed one for `hostname`, never smtp-server's built-in certificate
 * (its private key is public). Throws `ConfigError` for an unusable pair.
 */
export async function loadTlsCertificate(options: {
  certPath: string | undefined;
  keyPath: string | undefined;
  hostname: string;
  /** Names the configuration in errors. */
  where: string;
}): Promise<TlsCertificate> {
  const { certPath, keyPath, where } = options;
  if (certPath === undefined && keyPath === undefined) return selfSigned(options.hostname);
  if (certPath === undefined || keyPath === undefined) {
    const missing = certPath === undefined ? "smtp_tls_cert" : "smtp_tls_key";
    throw new ConfigError(where, "smtp_tls_cert and smtp_tls_key go together", missing);
  }
  const read = async (path: string, field: string) => {
    try {
      return await readFile(path, "utf8");
    } catch (error) {
      throw new ConfigError(where, `cannot be read (${(error as Error).message})`, field);
    }
  };
  return { cert: await read(certPath, "smtp_tls_cert"), key: await read(keyPath, "smtp_tls_key") };
}

// NOTE: selfsigned 2.4 takes a ready `keyPair` (PEM strings) although its types omit it.
type GenerateCertificate = (
  attrs: Array<{ name: string; value: string }>,
  options: {
    keyPair: { privateKey: string; publicKey: string };
    days: number;
    algorithm: "sha256";
    extensions: unknown[];
  },
) => selfsigned.GenerateResult;

async function selfSigned(hostname: string): Promise<TlsCertificate> {
  // NOTE: loaded only when a certificate is to be made: node-forge, under selfsigned, is the
  // largest library of the relay (several MiB of memory).
  const { generate } = (await import("selfsigned")).default;
  const generateCertificate = generate as GenerateCertificate;
  // NOTE: the key comes from Node's native generator; selfsigned's own (node-forge, pure JS)
  // takes seconds for 2048 bits. selfsigned then only builds and signs the certificate.
  const keyPair = await promisify(generateKeyPair)("rsa", {
    modulusLength: SELF_SIGNED_KEY_BITS,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  const pems = generateCertificate([{ name: "commonName", value: hostname }], {
    keyPair: { privateKey: keyPair.privateKey, publicKey: keyPair.publicKey },
    days: SELF_SIGNED_DAYS,
    algorithm: "sha256",
    extensions: [
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      // type 2: a DNS name
      { name: "subjectAltName", altNames: [{ type: 2, value: hostname }] },
    ],
  });
  return { key: pems.private, cert: pems.cert };
}
