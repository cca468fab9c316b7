import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { compiledModuleUrl } from "../worker-url.js";
import { type IdleBoot, inScratchFolder, whileIdle } from "./idle-memory.js";

const HOOK_URL = compiledModuleUrl("./module-log-hook.js", import.meta.url).href;

/** What a service has loaded by the time it idles. */
export interface LoadedModules {
  /** The URL of every module its main thread resolved. */
  readonly urls: readonly string[];
  /** The npm packages of those modules (`kysely`, `@aws-sdk/client-s3`). */
  readonly packages: ReadonlySet<string>;
}

/**
 * The modules a service has loaded by the time it idles (`whileIdle`; booted in a scratch folder,
 * `inScratchFolder`), recorded by `module-log-hook.ts` (given to Node with `--import` through
 * NODE_OPTIONS, which the start's environment must not set) in a file of that folder. A library
 * that a configuration loads only on first use shows up here when something puts it back on the
 * boot path, which an idle-memory reading tells only roughly.
 */
export function modulesLoadedAtIdle(boot: IdleBoot): Promise<LoadedModules> {
  return inScratchFolder(boot, async (start, folder) => {
    const log = join(folder, "module-log");
    const env = { ...start.env, NODE_OPTIONS: `--import=${HOOK_URL}`, MODULE_LOG: log };
    const text = await whileIdle({ ...start, env }, () => readFile(log, "utf8"));
    const urls = [...new Set(text.split("\n").filter(Boolean))];
    return { urls, packages: new Set(urls.flatMap(packageOf)) };
  });
}

/** The package of a module's URL (`kysely`, `@aws-sdk/client-s3`), none outside node_modules. */
function packageOf(url: string): string[] {
  const match = /.*\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return match?.[1] ? [match[1]] : [];
}
