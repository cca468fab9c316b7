import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

/** An RSA-2048 private key (PKCS#8 PEM) written 0600 in `dir`; returns its path. */
export async function writeKey(dir: string, name: string): Promise<string> {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const path = join(dir, name);
  await writeFile(path, privateKey.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });
  return path;
}
