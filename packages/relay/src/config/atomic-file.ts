import { randomBytes } from "node:crypto";
import { open, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { PRIVATE_FILE_MODE, syncToDisk } from "@rd/common";

/**
 * Replaces `path` with `content` so that a crash at any moment leaves either the old file or
 * the new one, never a truncated mix: write a temporary file in the same directory, fsync it,
 * rename it over the target, then fsync the directory so the rename itself is durable.
 */
export async function writeFileAtomic(path: string, content: string): Promise<void> {
  const mode = await writableMode(path);
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const file = await open(temp, "wx", mode);
  try {
    // NOTE: `open` applies the umask; the replacement must keep the old file's mode exactly.
    await file.chmod(mode);
    await file.writeFile(content, "utf8");
    await file.sync();
  } catch (error) {
    await file.close();
    await rm(temp, { force: true });
    throw error;
  }
  await file.close();
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
  await syncToDisk(dir);
}

/**
 * The permission bits the new file keeps: those of the file it replaces, so an operator's
 * choice stands; 0600 for a new one.
 * NOTE: a file without any write bit is refused even for root (who could rename over it):
 * an operator who made the configuration read-only does not want it rewritten.
 */
async function writableMode(path: string): Promise<number> {
  try {
    const { mode } = await stat(path);
    if ((mode & 0o222) === 0) throw new Error(`${path} is read-only`);
    return mode & 0o777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return PRIVATE_FILE_MODE;
    throw error;
  }
}
