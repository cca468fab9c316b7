import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture, ManualClock, makeTempDir } from "@rd/common/test-kit";
import type { FastifyInstance } from "fastify";
import { GithubClient } from "../../src/codehost/github/github-client.js";
import { type Config, loadConfig } from "../../src/config.js";
import type { Database } from "../../src/db/database.js";
import { type AppDeps, buildApp } from "../../src/http/app.js";
import { createSchedulerState, type SchedulerState } from "../../src/scheduler/scheduler-state.js";
import { type Adapters, createServices } from "../../src/services.js";
import type { HealthProbe, ReleaseActivity } from "../../src/status/status-service.js";
import { LocalObjectStore } from "../../src/storage/local-store.js";
import type { StorageProviders } from "../../src/storage/storage-providers.js";
import { createPasswordHasher } from "../../src/users/password-hasher.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { createTestDatabase, type Dialect, type TestDatabase } from "./test-database.js";

export const TEST_API_KEY = "test-api-key-0123456789";
export const TEST_JWT_SECRET = "test-jwt-secret-0123456789abcdefghijklmnop";

export interface TestApp {
  readonly app: FastifyInstance;
  readonly database: Database;
  readonly testDatabase: TestDatabase;
  readonly stub: GithubStub;
  readonly config: Config;
  readonly clock: ManualClock;
  readonly scheduler: SchedulerState;
  readonly logs: LogCapture;
  /** The services behind the app (the scheduler tests drive the release service with them). */
  readonly services: AppDeps;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment variables on top of the test defaults (API key, JWT secret, stub URL). */
  readonly env?: Record<string, string | undefined>;
  readonly objectstore?: HealthProbe | null;
  readonly releases?: ReleaseActivity;
  /** Release storage; by default a local store in a temp folder removed by close(). */
  readonly storage?: StorageProviders;
  /** A GitHub stub already started (with extra routes); not closed by close(). */
  readonly stub?: GithubStub;
  /** An existing test database (a second instance on the same database); not dropped by close(). */
  readonly testDatabase?: TestDatabase;
  /** bcrypt cost; the lowest (4) unless a test measures timing. */
  readonly bcryptCost?: number;
}

/** An app wired exactly as main.ts does, on a fresh database and a GitHub stub. */
export async function createTestApp(
  dialect: Dialect,
  options: TestAppOptions = {},
): Promise<TestApp> {
  const stub = options.stub ?? (await startGithubStub());
  const testDatabase = options.testDatabase ?? (await createTestDatabase(dialect));
  const files = await makeTempDir("rd-delivery-files-");
  const config = loadConfig({
    DATABASE_URL: testDatabase.url,
    API_KEY: TEST_API_KEY,
    JWT_SECRET: TEST_JWT_SECRET,
    CODEHOST_API_URL: stub.url,
    CODEHOST_TOKEN: "stub-token",
    ...options.env,
  });
  const database = await testDatabase.open();
  const logs = new LogCapture();
  const logging = createLogging({ destination: logs, filter: "debug" });
  const clock = new ManualClock();
  const scheduler = createSchedulerState();
  const adapters: Adapters = {
    config,
    logging,
    database,
    codehost: new GithubClient({
      baseUrl: config.codehost.apiUrl,
      token: config.codehost.token,
      logger: logging.forTarget("delivery::codehost"),
      policy: { retryBaseDelayMs: 5 },
    }),
    clock,
    jwtSecret: config.jwtSecret ?? TEST_JWT_SECRET,
    scheduler,
    objectstore: options.objectstore ?? null,
    ...(options.releases ? { releases: options.releases } : {}),
    storage: options.storage ?? {
      local: new LocalObjectStore(join(files.path, "files")),
      objectstore: null,
      defaultDeliveryUrl: (provider, bucket) =>
        provider === "local" ? `http://delivery.test/files/${bucket}` : null,
    },
    tempDir: join(files.path, "tmp"),
    // The lowest bcrypt cost keeps the suite fast; the timing test asks for a real one.
    hasher: createPasswordHasher(options.bcryptCost ?? 4),
  };
  const services = createServices(adapters);
  const app = await buildApp(services);
  return {
    app,
    database,
    testDatabase,
    stub,
    config,
    clock,
    scheduler,
    logs,
    services,
    async close() {
      await app.close();
      await services.notifications.drain();
      await database.close();
      if (!options.testDatabase) await testDatabase.drop();
      if (!options.stub) await stub.close();
      await files.remove();
    },
  };
}
