import { readFileSync } from "node:fs";

/**
 * The `version` of a package.json, read once at startup:
 * `readPackageVersion(new URL("../package.json", import.meta.url))`.
 */
export function readPackageVersion(packageJson: URL): string {
  const { version } = JSON.parse(readFileSync(packageJson, "utf8")) as { version?: unknown };
  if (typeof version !== "string") throw new Error(`${packageJson.pathname}: no "version"`);
  return version;
}
