/**
 * Composition root: configuration → state database → adapters → services → HTTP app.
 * `createRelay(env)` opens the state and builds everything without listening (tests use it
 * with `inject`, or call `listen()` for a real socket); `serve(env)` is what `relay serve`
 * runs. The wiring itself is `relay-assembly.ts`.
 */
import {
  batchHelperThreads,
  bootStep,
  type Clock,
  createLogging,
  type Logging,
  systemClock,
  waitForStopSignal,
} from "@rd/common";
import { loadConfigFile } from "./config/config-loader.js";
import { createConfigStore } from "./config/config-store.js";
import { ledgerFileCulprit, type RelayEnv } from "./config/env.js";
import type { ConfigFile } from "./config/schema.js";
import { createLedger, LEDGER_TARGET } from "./ledger/ledger.js";
import { assembleRelay, type Relay, STATE_DIR } from "./relay-assembly.js";
import { withInstance } from "./shared/instance-logging.js";
import { openStateDatabase } from "./state/state-database.js";

export { type Relay, SHUTDOWN_GRACE_MS } from "./relay-assembly.js";

export interface RelayOptions {
  /** Default: JSON lines on stdout filtered by `RUST_LOG`. */
  logging?: Logging;
  clock?: Clock;
}

/** Builds the relay from its environment. Throws `ConfigError` for an unusable configuration. */
export async function createRelay(env: RelayEnv, options: RelayOptions = {}): Promise<Relay> {
  const baseLogging = options.logging ?? createLogging({ filter: env.logFilter });
  // Several instances on one database: every line says which one wrote it.
  const logging = env.databaseUrl ? withInstance(baseLogging, env.instance) : baseLogging;
  const clock = options.clock ?? systemClock;
  const log = logging.forTarget("relay");
  const file = await loadConfigFile(env);
  // Boot steps fail with a ConfigError naming the variable or field to fix (the CLI exits 2).
  const shared = await openShared(env, file, logging, clock);
  const config = shared?.config ?? createConfigStore(file, env);
  const db = await bootStep(STATE_DIR, `cannot open the state database in ${env.dbDir}`, () =>
    openStateDatabase(env.dbDir),
  ).catch(async (error) => {
    await shared?.close();
    throw error;
  });
  const current = config.current();
  const ledger = createLedger({
    logger: logging.forTarget(LEDGER_TARGET),
    errors: log,
    ...(env.databaseUrl && { instance: env.instance }),
    ...(current.ledger_file && {
      file: { path: current.ledger_file, maxBytes: current.ledger_max_bytes },
    }),
  });
  try {
    if (current.ledger_file) {
      const problem = `cannot open the ledger file ${current.ledger_file}`;
      await bootStep(ledgerFileCulprit(env), problem, () => ledger.open());
    }
    return await assembleRelay({ env, logging, clock, config, db, ledger, shared });
  } catch (error) {
    // A boot that fails part-way (queue recovery, the SMTP certificate, the app) leaves nothing
    // open: the caller gets the error, not a locked database.
    await ledger.close();
    db.close();
    await shared?.close();
    throw error;
  }
}

/** `RELAY_DATABASE_URL`: the state several instances share; undefined for the embedded relay. */
function openShared(env: RelayEnv, file: ConfigFile, logging: Logging, clock: Clock) {
  const url = env.databaseUrl;
  if (url === undefined) return undefined;
  return bootStep({ where: "RELAY_DATABASE_URL" }, "cannot use the shared database", async () => {
    // Loaded only here: Kysely and the MySQL driver are some 500 modules the embedded relay
    // never uses (idle memory, README "Memory").
    const { openSharedState } = await import("./shared/shared-state.js");
    return openSharedState({ url, file, env, clock, logger: logging.forTarget("relay::shared") });
  });
}

/** `relay serve`: runs until SIGTERM or SIGINT, then shuts down gracefully. Returns the exit code. */
export async function serve(env: RelayEnv, options: RelayOptions = {}): Promise<number> {
  const logging = options.logging ?? createLogging({ filter: env.logFilter });
  const relay = await createRelay(env, { ...options, logging });
  const stop = waitForStopSignal();
  try {
    await relay.listen();
  } catch (error) {
    // A port in use or not permitted: release what was opened before reporting.
    await relay.close();
    throw error;
  }
  void batchHelperThreads(logging.forTarget("relay"));
  const signal = await stop;
  logging.forTarget("relay").info("shutting down", { signal });
  await relay.close();
  return 0;
}
