import { execFile } from "node:child_process";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = dirname(fileURLToPath(import.meta.url));

/**
 * Builds every package once per Vitest run, before any test: the process tests run the compiled
 * binaries (`bin/<service>.js` → `dist/`), and a run of one file after a source change must not
 * test the previous build. `tsc -b` only recompiles what changed (about a second otherwise).
 */
export default async function buildPackages(): Promise<void> {
  try {
    await promisify(execFile)("npm", ["run", "--silent", "build"], { cwd: ROOT });
  } catch (error) {
    const { stdout = "", stderr = "" } = error as { stdout?: string; stderr?: string };
    throw new Error(
      `npm run build failed, so no test runs against a stale dist/:\n${stdout}${stderr}`,
    );
  }
}
