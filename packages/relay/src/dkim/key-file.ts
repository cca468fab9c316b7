import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "@rd/common";

/**
 * Characters of `<domain>.<selector>` kept at the head of a key file's name. A valid domain
 * (253) and selector (253) together would pass the file-name limit (255 bytes on ext4, XFS,
 * btrfs…); a name cut here, plus the suffix, stays well within it.
 */
const READABLE_NAME_LENGTH = 200;

/**
 * Writes a new private key into `dir` with mode 0600 and returns its absolute path.
 * The name is `<domain>.<selector>` (cut to READABLE_NAME_LENGTH) with a random suffix, so two
 * registrations never write the same file. The configuration keeps the full path, so a key is
 * always read by its recorded path, whatever scheme named it.
 */
export async function writePrivateKeyFile(
  dir: string,
  domain: string,
  selector: string,
  pem: string,
): Promise<string> {
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const readable = `${domain}.${selector}`.slice(0, READABLE_NAME_LENGTH);
  const path = join(dir, `${readable}.${randomBytes(4).toString("hex")}.pem`);
  const file = await open(path, "wx", PRIVATE_FILE_MODE);
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
