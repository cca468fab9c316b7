import { readPackageVersion } from "@rd/common";

/** The service's version, read once from its package.json. */
export const VERSION = readPackageVersion(new URL("../package.json", import.meta.url));
