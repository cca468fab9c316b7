import { createRequire } from "node:module";

/** The service's version, read once from its package.json. */
export const VERSION: string = (
  createRequire(import.meta.url)("../package.json") as { version: string }
).version;
