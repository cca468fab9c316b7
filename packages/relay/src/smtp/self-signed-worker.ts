/**
 * The worker thread of `tls-certificate.ts`: makes a self-signed certificate for the host name
 * it is given, answers with it and ends, and node-forge's memory with it.
 */
import { generateKeyPair } from "node:crypto";
import { promisify } from "node:util";
import { parentPort, workerData } from "node:worker_threads";
import selfsigned from "selfsigned";
import { firstAccepted, type TlsCertificate } from "./tls-certificate.js";

// A generated certificate is valid this long; a new one is made at every boot anyway.
const SELF_SIGNED_DAYS = 365;
const SELF_SIGNED_KEY_BITS = 2048;

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
  const generateCertificate = selfsigned.generate as GenerateCertificate;
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

if (!parentPort) throw new Error("self-signed-worker runs only as a worker thread");
parentPort.postMessage(await firstAccepted(() => selfSigned(workerData as string)));
