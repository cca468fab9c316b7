// Given to a service's Node with `--import` by `modulesLoadedAtIdle`: registers this module as a
// resolve hook, which appends the URL of every module the service resolves to the file named by
// MODULE_LOG, a line each. The hook runs in Node's loader thread, where it is not registered again.
import { appendFileSync } from "node:fs";
import { type ResolveHook, register } from "node:module";
import { isMainThread } from "node:worker_threads";

if (isMainThread) register(import.meta.url);

export const resolve: ResolveHook = async (specifier, context, next) => {
  const resolved = await next(specifier, context);
  const log = process.env.MODULE_LOG;
  if (log) appendFileSync(log, `${resolved.url}\n`);
  return resolved;
};
