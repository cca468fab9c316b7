import type { KeyObject } from "node:crypto";
import { join } from "node:path";
import { createLogging } from "@rd/common";
import { LogCapture, ManualClock, makeTempDir } from "@rd/common/test-kit";
import { GithubClient } from "../../src/codehost/github/github-client.js";
import type { Database } from "../../src/db/database.js";
import { type HistoryRecord, HistoryRepository } from "../../src/releases/history-repository.js";
import { LocationRepository } from "../../src/releases/location-repository.js";
import { type ProcessingPolicy, ReleaseProcessor } from "../../src/releases/release-processor.js";
import { RESERVED_NAMES } from "../../src/releases/reserved-names.js";
import {
  type WatchedRepository,
  WatchedRepositoryStore,
} from "../../src/repositories/watched-repository-store.js";
import { LocalObjectStore } from "../../src/storage/local-store.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import type { StorageProviders } from "../../src/storage/storage-providers.js";
import { type GithubStub, startGithubStub } from "../fixtures/github-stub.js";
import { createTestDatabase, type Dialect, type TestDatabase } from "../helpers/test-database.js";
import { type S3Server, startS3Server } from "../storage/s3-server.js";
import { createReleaseStub, type ReleaseStub } from "./release-stub.js";

/** The public base of local buckets in these tests. */
export const LOCAL_BASE_URL = "http://delivery.test/files";
/** Buckets created on the s3rver instance. */
export const S3_BUCKETS = ["downloads", "mirror"];

/**
 * Retries at once: the policy's waits are data, slept on the harness's manual clock, which
 * only a test moving it would wake (see publish-attempts.test.ts).
 */
export const FAST_POLICY: Partial<ProcessingPolicy> = { retryDelaysMs: [0, 0] };

export interface ProcessingHarness {
  readonly stub: GithubStub;
  readonly releases: ReleaseStub;
  readonly local: LocalObjectStore;
  readonly s3: S3Server;
  readonly objectstore: ObjectStore;
  readonly testDatabase: TestDatabase;
  readonly database: Database;
  readonly repos: WatchedRepositoryStore;
  readonly history: HistoryRepository;
  readonly clock: ManualClock;
  readonly logs: LogCapture;
  readonly storage: StorageProviders;
  /**
   * A processor on the harness database, or on another connection to it (a second instance);
   * `policy` is laid over `FAST_POLICY`.
   */
  processor(options?: {
    database?: Database;
    storage?: StorageProviders;
    policy?: Partial<ProcessingPolicy>;
    onFinished?: (record: HistoryRecord) => Promise<void>;
    /** Signs each SHA256SUMS (RELEASE_SIGNING_KEY). */
    signingKey?: KeyObject;
  }): ReleaseProcessor;
  /** Registers `owner/name` on the stub and in the database. */
  addRepository(fullName: string): Promise<WatchedRepository>;
  /**
   * Keys under `prefix` in a bucket of a store, sorted; the checksums and manifests written in
   * each folder (`SHA256SUMS`, `manifest.json`, …) are left out unless `withManifests`.
   */
  keys(
    store: ObjectStore,
    bucket: string,
    prefix?: string,
    options?: { withManifests?: boolean },
  ): Promise<string[]>;
  close(): Promise<void>;
}

export async function createProcessingHarness(
  dialect: Dialect = "sqlite",
): Promise<ProcessingHarness> {
  const releases = createReleaseStub();
  const stub = await startGithubStub({ routes: [releases.routes] });
  const dir = await makeTempDir("rd-processing-");
  const local = new LocalObjectStore(join(dir.path, "files"));
  const s3 = await startS3Server(S3_BUCKETS);
  const objectstore = s3.store();
  const testDatabase = await createTestDatabase(dialect);
  const database = await testDatabase.open();
  const repos = new WatchedRepositoryStore(database.db);
  const history = new HistoryRepository(database.db);
  const clock = new ManualClock();
  const logs = new LogCapture();
  const logging = createLogging({ destination: logs, filter: "debug" });
  const storage: StorageProviders = {
    local,
    objectstore,
    defaultDeliveryUrl: (provider, bucket) =>
      provider === "local" ? `${LOCAL_BASE_URL}/${bucket}` : `${s3.endpoint}/${bucket}`,
  };
  const client = new GithubClient({
    baseUrl: stub.url,
    token: "stub-token",
    logger: logging.forTarget("delivery::codehost"),
    policy: { retries: 0, retryBaseDelayMs: 1 },
  });

  return {
    stub,
    releases,
    local,
    s3,
    objectstore,
    testDatabase,
    database,
    repos,
    history,
    clock,
    logs,
    storage,
    processor(options = {}) {
      const db = options.database ?? database;
      return new ReleaseProcessor({
        host: client,
        history: new HistoryRepository(db.db),
        locations: new LocationRepository(db.db),
        storage: options.storage ?? storage,
        clock,
        logger: logging.forTarget("delivery::releases"),
        tempDir: join(dir.path, "tmp"),
        policy: { ...FAST_POLICY, ...options.policy },
        onFinished: options.onFinished,
        signingKey: options.signingKey,
      });
    },
    async addRepository(fullName) {
      stub.addRepository(fullName);
      const [owner = "", name = ""] = fullName.split("/");
      return repos.add(owner, name, clock.now().toISOString());
    },
    async keys(store, bucket, prefix = "", options = {}) {
      const found: string[] = [];
      for await (const object of store.list(bucket, prefix)) {
        const name = object.key.slice(object.key.lastIndexOf("/") + 1);
        if (options.withManifests || !RESERVED_NAMES.includes(name)) found.push(object.key);
      }
      return found.sort();
    },
    async close() {
      await testDatabase.drop();
      await s3.close();
      await stub.close();
      await dir.remove();
    },
  };
}
