import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";

/**
 * Writes a new private key into `dir` with mode 0600 and returns its absolute path.
 * The name carries a random suffix so two registrations never write the same file.
 */
export async function writePrivateKeyFile(
  dir: string,
  domain: string,
  selector: string,
  pem: string,
): Promise<string> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `${domain}.${selector}.${randomBytes(4).toString("hex")}.pem`);
  const file = await open(path, "wx", 0o600);
  try {
    await file.writeFile(pem, "utf8");
    await file.sync();
  } finally {
    await file.close();
  }
  return path;
}

export function readPrivateKeyFile(path: string): Promise<string> {
  return readFile(path, "utf8");
}

/** Removes a key file; a file already gone is not an error. */
export async function removePrivateKeyFile(path: string): Promise<void> {
  await rm(path, { force: true });
}
