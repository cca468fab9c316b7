// The composition root: config → logging → database (migrated) → adapters → services → HTTP.
//
// `startService(config)` opens the real adapters, builds the app with `createServices` +
// `buildApp` and listens; `serve(env)` adds the process concerns (config errors, signals,
// graceful shutdown). To wire a new adapter: open it in `startService`, pass it to
// `createServices` (services.ts), and close it in `stop()` after the HTTP server.
import {
  bootStep,
  type Clock,
  ConfigError,
  closeHttpGracefully,
  createLogging,
  type Logging,
  type LoggingOptions,
  systemClock,
  waitForStopSignal,
  withinDeadline,
} from "@rd/common";
import type { FastifyInstance } from "fastify";
import { GithubClient } from "./codehost/github/github-client.js";
import type { CodeHostPolicy } from "./codehost/github/github-octokit.js";
import { type Config, loadConfig } from "./config.js";
import { migrateToLatest, openDatabase } from "./db/database.js";
import { buildApp } from "./http/app.js";
import { resolveJwtSecret } from "./jwt-secret.js";
import { WatchedRepositoryStore } from "./repositories/watched-repository-store.js";
import { buildReleaseScheduler, MINUTE_MS } from "./scheduler/build-scheduler.js";
import { createSchedulerState } from "./scheduler/scheduler-state.js";
import { createServices } from "./services.js";
import { removeAbandonedScratch } from "./storage/scratch-files.js";
import { spoolDirFor, storageFromConfig } from "./storage/storage-providers.js";
import { VERSION } from "./version.js";

const DATABASE = { where: "DATABASE_URL" };

/** Requests in flight at shutdown get this long to finish (decisions: at most 10 s). */
export const SHUTDOWN_GRACE_MS = 10_000;

export interface StartOptions {
  readonly logging?: Logging;
  readonly clock?: Clock;
  readonly codehostPolicy?: Partial<CodeHostPolicy>;
  /** Grace period of requests in flight at shutdown; SHUTDOWN_GRACE_MS unless given. */
  readonly shutdownGraceMs?: number;
}

export interface RunningService {
  readonly app: FastifyInstance;
  /** `http://host:port` the server listens on. */
  readonly address: string;
  /**
   * Stops the scheduler, stops accepting and lets requests in flight finish (≤ SHUTDOWN_GRACE_MS
   * each), waits for notifications being sent, then closes the database and the object store.
   */
  stop(): Promise<void>;
}

export async function startService(
  config: Config,
  options: StartOptions = {},
): Promise<RunningService> {
  const logging = options.logging ?? createLogging({ filter: config.logFilter });
  const log = logging.forTarget("delivery::main");
  const clock = options.clock ?? systemClock;

  // Boot steps fail with a ConfigError naming the variable to fix (the CLI exits 2).
  const database = await bootStep(DATABASE, "cannot open the database", () =>
    openDatabase(config.database),
  );
  try {
    const applied = await bootStep(DATABASE, "cannot reach or migrate the database", () =>
      migrateToLatest(database),
    );
    log.info("database ready", { dialect: database.dialect.kind, migrations_applied: applied });
    const jwtSecret = await bootStep(
      { where: "JWT_SECRET" },
      "unset, and the generated secret cannot be kept",
      () => resolveJwtSecret(config, log),
    );
    const codehost = new GithubClient({
      baseUrl: config.codehost.apiUrl,
      token: config.codehost.token,
      logger: logging.forTarget("delivery::codehost"),
      policy: {
        downloadIdleTimeoutMs: config.codehost.downloadIdleTimeoutSeconds * 1000,
        ...options.codehostPolicy,
      },
    });
    if (!config.apiKey) log.warn("API_KEY is not set: API-key-only endpoints refuse every request");
    if (!config.hostingWebhookSecret) {
      log.warn("HOSTING_WEBHOOK_SECRET is not set: the webhook receiver refuses every delivery");
    }
    const storage = storageFromConfig(config);
    // A process killed mid-publish leaves its scratch files (half-written objects, zip
    // archives) behind; its claim on the release is taken over once its lease expires.
    const leftovers = await bootStep({ where: "LOCAL_STORAGE_DIR" }, "cannot be read", () =>
      removeAbandonedScratch(spoolDirFor(config)),
    );
    log.info("storage ready", {
      local: storage.local.root,
      objectstore: storage.objectstore !== null,
      leftovers_removed: leftovers.length,
    });

    const schedulerState = createSchedulerState();
    const services = createServices({
      config,
      logging,
      database,
      codehost,
      clock,
      jwtSecret,
      scheduler: schedulerState,
      objectstore: storage.objectstore,
      storage,
    });
    const app = await buildApp(services);
    const address = await bootStep(
      { where: "HOST, PORT" },
      `cannot listen on ${config.host}:${config.port}`,
      () => app.listen({ host: config.host, port: config.port }),
    );
    log.info("listening", { address, version: VERSION });
    const scheduler = buildReleaseScheduler({
      intervalMs: config.schedulerIntervalMinutes * MINUTE_MS,
      db: database.db,
      clock,
      logging,
      state: schedulerState,
      repos: new WatchedRepositoryStore(database.db),
      check: (repository) => services.releases.checkRepository(repository, "scheduler"),
      onTick: (outcome) => {
        services.metrics.schedulerTicked(outcome);
        services.monitor.publish({
          type: "scheduler_round",
          outcome,
          at: clock.now().toISOString(),
        });
      },
    });
    scheduler.start();
    if (config.schedulerIntervalMinutes === 0) {
      log.info("scheduler off (SCHEDULER_INTERVAL_MINUTES=0)");
    }

    return {
      app,
      address,
      async stop() {
        // `GET /ready` answers 503 from now on: a balancer stops sending while requests finish.
        services.readiness.markStopping();
        // A round in progress ends after the repository it is publishing; past the grace
        // period the database closes under it and its claim is taken over later (stale claim).
        if (
          !(await withinDeadline(scheduler.stop(), options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS))
        ) {
          log.warn("scheduler round still running after the grace period");
        }
        await closeHttpGracefully(app, options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS, () =>
          log.warn("requests still in flight after the grace period: closing their connections"),
        );
        // Telegram sends in flight record their outcome in the database: they end before it closes.
        await services.notifications.drain();
        await database.close();
        storage.objectstore?.close();
        log.info("stopped");
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

export interface ServeOptions {
  /** Resolves when the service should stop; SIGTERM/SIGINT by default. */
  readonly stopSignal?: Promise<unknown>;
  readonly logDestination?: LoggingOptions["destination"];
  readonly codehostPolicy?: Partial<CodeHostPolicy>;
}

/**
 * `delivery serve`: runs until a stop signal; resolves with the exit code (0 clean, 1 failed).
 * Throws a ConfigError naming the variable when the configuration or a boot step is unusable.
 */
export async function serve(
  env: Readonly<Record<string, string | undefined>>,
  options: ServeOptions = {},
): Promise<number> {
  const destination = options.logDestination ? { destination: options.logDestination } : {};
  const config = loadConfig(env);
  const logging = createLogging({ filter: config.logFilter, ...destination });
  const log = logging.forTarget("delivery::main");
  const stopSignal = options.stopSignal ?? waitForStopSignal();
  try {
    const service = await startService(config, {
      logging,
      ...(options.codehostPolicy ? { codehostPolicy: options.codehostPolicy } : {}),
    });
    const signal = await stopSignal;
    log.info("shutting down", { signal: typeof signal === "string" ? signal : undefined });
    await service.stop();
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    log.error("service failed", { error: (error as Error).message });
    return 1;
  } finally {
    logging.flush();
  }
}
