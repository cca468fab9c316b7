import { randomBytes, randomUUID } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import { hostname } from "node:os";
import { join } from "node:path";

// Scratch files (local-store writes in progress, zip archives being walked) are named for the
// process that writes them: `<host>_<pid>_<boot>_<uuid>[.zip]`. A boot can then remove what a
// killed process left behind without touching the files of another instance that shares the
// folder and is still running.

/** Host names are at most 63 characters a label; anything unusual becomes `-`. */
const HOST = hostname()
  .replace(/[^A-Za-z0-9.-]/g, "-")
  .slice(0, 64);
/** Tells this process from an earlier one with the same pid (a container restarted). */
const BOOT = randomBytes(4).toString("hex");
const OWNER = `${HOST}_${process.pid}_${BOOT}`;

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
/** Owner optional: names from before owners were recorded are leftovers by definition. */
const SCRATCH_NAME = new RegExp(`^(?:([A-Za-z0-9.-]+)_(\\d+)_([0-9a-f]{8})_)?${UUID}(?:\\.zip)?$`);

/** A fresh scratch file name owned by this process; `extension` such as `.zip`. */
export function scratchFileName(extension: "" | ".zip" = ""): string {
  return `${OWNER}_${randomUUID()}${extension}`;
}

/**
 * Whether `name` is a scratch file whose writer cannot be running: one from before owners
 * were recorded, or one of this host's whose process is gone or was an earlier boot with
 * this process's pid. Files of other hosts are left to their own boots.
 */
export function isAbandonedScratch(name: string): boolean {
  const match = SCRATCH_NAME.exec(name);
  if (!match) return false;
  const [, host, pid, boot] = match;
  if (host === undefined) return true;
  if (host !== HOST) return false;
  if (Number(pid) === process.pid) return boot !== BOOT;
  return !isRunning(Number(pid));
}

/** Removes the abandoned scratch files directly in `dir`; returns their names. */
export async function removeAbandonedScratch(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  const abandoned = names.filter(isAbandonedScratch);
  for (const name of abandoned) await rm(join(dir, name), { force: true });
  return abandoned;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
