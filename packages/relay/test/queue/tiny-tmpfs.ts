import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Mounts a tmpfs of `sizeKb` KiB at `dir`: a real file system that fills up, for the
 * "disk full" cases. Needs the right to mount (root with CAP_SYS_ADMIN, as in the CI
 * container); resolves undefined, with a loud warning, where that is not permitted.
 * Returns the function that unmounts it.
 */
export async function mountTinyTmpfs(
  dir: string,
  sizeKb: number,
): Promise<(() => Promise<void>) | undefined> {
  await mkdir(dir, { recursive: true });
  try {
    await run("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k,mode=0700`, "tmpfs", dir]);
  } catch (error) {
    console.warn(
      `WARNING: cannot mount a tmpfs here (${(error as Error).message.trim()}); the full-disk case is not exercised`,
    );
    return undefined;
  }
  return async () => {
    await run("umount", [dir]);
  };
}
