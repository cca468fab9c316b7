import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Mounts a tmpfs of `sizeKb` KiB at `dir`: a real file system that fills up, for the
 * "disk full" cases. Needs the right to mount (root with CAP_SYS_ADMIN, as in the CI
 * container); resolves undefined, with a loud warning, where that is not permitted, except under
 * `CI=true`, where it is an error.
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
    const reason = `cannot mount a tmpfs here (${(error as Error).message.trim()})`;
    if (process.env.CI === "true") throw new Error(`${reason}: required under CI=true`);
    console.warn(`\n!!! ${reason}: the full-disk case is SKIPPED !!!\n`);
    return undefined;
  }
  return async () => {
    await run("umount", [dir]);
  };
}
