import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { ConfigError, isAppError } from "@rd/common";
import { loadConfigFile } from "../config/config-loader.js";
import { ConfigPersistError, createConfigStore } from "../config/config-store.js";
import type { RelayEnv } from "../config/env.js";
import { createDnsResolver } from "../dns/dns-resolver.js";
import { createDnsCheck } from "../dns-check/configured-dns-check.js";

/** Exit codes of `relay check` (decisions.md). */
const EXIT = { ok: 0, failing: 1, unusable: 2 } as const;

/**
 * `relay check [domain]`: the DNS validation of `GET /check` without a server, from the
 * configuration file. Prints the report as JSON; promotes passing `pending` domains (the file
 * is rewritten). Exit 0 when ok, 1 when a check fails, 2 for an unknown domain or a
 * configuration that cannot be read (or rewritten).
 */
export async function checkCommand(args: readonly string[], env: RelayEnv): Promise<number> {
  // NOTE: unlike `serve`, a missing file is not created: checking nothing would hide a wrong path.
  try {
    await access(env.configPath, constants.R_OK);
  } catch (error) {
    throw new ConfigError(env.configPath, `cannot be read (${(error as Error).message})`);
  }
  const store = createConfigStore(await loadConfigFile(env), env);
  const check = createDnsCheck({ store, resolver: createDnsResolver(env.dnsServer) });
  try {
    const report = await check.run(args[0]);
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return report.ok ? EXIT.ok : EXIT.failing;
  } catch (error) {
    if (isAppError(error)) {
      process.stdout.write(`${JSON.stringify({ error: error.code, message: error.message })}\n`);
      process.stderr.write(`relay check: ${error.message}\n`);
      return EXIT.unusable;
    }
    if (error instanceof ConfigPersistError) {
      process.stderr.write(`relay check: ${error.message}\n`);
      return EXIT.unusable;
    }
    throw error;
  }
}
