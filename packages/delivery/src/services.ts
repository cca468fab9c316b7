import { createPrivateKey } from "node:crypto";
import type { Clock, Logging } from "@rd/common";
import type { CodeHost } from "./codehost/code-host.js";
import type { Config } from "./config.js";
import type { Database } from "./db/database.js";
import type { AppDeps } from "./http/app.js";
import { MonitorEvents } from "./monitor/monitor-events.js";
import { PublicationTracker } from "./monitor/publication-tracker.js";
import { NotificationRepository } from "./notifications/notification-repository.js";
import { NotificationService } from "./notifications/notification-service.js";
import { telegramChannel } from "./notifications/telegram-client.js";
import { createDeliveryMetrics } from "./observability/delivery-metrics.js";
import { createDeliveryReadiness } from "./observability/delivery-readiness.js";
import { HistoryRepository } from "./releases/history-repository.js";
import { LocationRepository } from "./releases/location-repository.js";
import { ReleaseProcessor } from "./releases/release-processor.js";
import { ReleaseService } from "./releases/release-service.js";
import { RepoService } from "./repositories/repo-service.js";
import { WatchedRepositoryStore } from "./repositories/watched-repository-store.js";
import type { SchedulerState } from "./scheduler/scheduler-state.js";
import { type HealthProbe, type ReleaseActivity, StatusService } from "./status/status-service.js";
import {
  type StorageProviders,
  spoolDirFor,
  storageFromConfig,
} from "./storage/storage-providers.js";
import { AuthService } from "./users/auth-service.js";
import { createPasswordHasher, type PasswordHasher } from "./users/password-hasher.js";
import { TokenService } from "./users/token-service.js";
import { UserRepository } from "./users/user-repository.js";
import { VERSION } from "./version.js";
import { WebhookManager } from "./webhooks/webhook-manager.js";
import { WebhookReceiver } from "./webhooks/webhook-receiver.js";

/** The adapters (side effects) the services are built on; main.ts opens the real ones. */
export interface Adapters {
  readonly config: Config;
  readonly logging: Logging;
  readonly database: Database;
  readonly codehost: CodeHost;
  readonly clock: Clock;
  readonly jwtSecret: string;
  readonly scheduler: SchedulerState;
  /** The S3-compatible object store, when one is configured. */
  readonly objectstore: HealthProbe | null;
  /** Release activity for the status; the release history unless given. */
  readonly releases?: ReleaseActivity;
  /** The storage providers releases are published to; from the configuration unless given. */
  readonly storage?: StorageProviders;
  /** Folder for zip archives while their entries are published; beside the local files unless given. */
  readonly tempDir?: string;
  /** bcrypt at the production cost unless given. */
  readonly hasher?: PasswordHasher;
}

/** Builds every service from the adapters: the one composition shared by main.ts and tests. */
export function createServices(adapters: Adapters): AppDeps {
  const { config, database, clock } = adapters;
  const tokens = new TokenService(adapters.jwtSecret, clock);
  const users = new UserRepository(database.db);
  const watchedRepositories = new WatchedRepositoryStore(database.db);
  const history = new HistoryRepository(database.db);
  const storage = adapters.storage ?? storageFromConfig(config);
  const objectstore = adapters.objectstore ?? storage.objectstore;
  const status = new StatusService({
    version: VERSION,
    repos: watchedRepositories,
    releases: adapters.releases ?? history,
    database,
    databaseKind: database.dialect.kind,
    objectstore,
    codehost: adapters.codehost,
    scheduler: adapters.scheduler,
    schedulerIntervalMinutes: config.schedulerIntervalMinutes,
    clock,
  });
  const metrics = createDeliveryMetrics({
    rateLimitRemaining: async () => (await status.codehostRateLimit())?.remaining ?? null,
  });
  const notifications = new NotificationService(
    new NotificationRepository(database.db),
    telegramChannel(config.telegram, adapters.logging.forTarget("delivery::telegram")),
    clock,
    adapters.logging.forTarget("delivery::notifications"),
  );
  const monitor = new MonitorEvents();
  const publications = new PublicationTracker(monitor);
  const processor = new ReleaseProcessor({
    // Observed for the event stream's live progress (GET /monitor/events).
    host: publications.observe(adapters.codehost),
    history,
    locations: new LocationRepository(database.db),
    storage,
    clock,
    logger: adapters.logging.forTarget("delivery::releases"),
    tempDir: adapters.tempDir ?? spoolDirFor(config),
    signingKey:
      config.releaseSigningKey === undefined
        ? undefined
        : createPrivateKey(config.releaseSigningKey),
    policy: {
      staleClaimMs: config.releaseClaimLeaseSeconds * 1000,
      latestMaxAgeSeconds: config.latestMaxAgeSeconds,
      transferConcurrency: config.publishConcurrency,
    },
    onFinished: (record) => {
      publications.finished(record);
      return notifications.releaseRecorded(record);
    },
    onProcessed: (release) => metrics.releaseProcessed(release),
  });
  const releases = new ReleaseService(
    watchedRepositories,
    processor,
    history,
    clock,
    adapters.logging.forTarget("delivery::releases"),
  );
  return {
    version: VERSION,
    logging: adapters.logging,
    apiKey: config.apiKey,
    publicUrl: config.publicUrl,
    database,
    tokens,
    auth: new AuthService(users, adapters.hasher ?? createPasswordHasher(), tokens, clock),
    repos: new RepoService(watchedRepositories, adapters.codehost, clock),
    status,
    releases,
    localFilesRoot: storage.local.root,
    filesInlineActiveContent: config.filesInlineActiveContent,
    latestMaxAgeSeconds: config.latestMaxAgeSeconds,
    notifications,
    webhookReceiver: new WebhookReceiver({
      secret: config.hostingWebhookSecret,
      repos: watchedRepositories,
      releases,
      logger: adapters.logging.forTarget("delivery::webhooks"),
    }),
    webhooks: new WebhookManager(adapters.codehost, {
      publicUrl: config.publicUrl,
      secret: config.hostingWebhookSecret,
    }),
    metrics,
    monitor,
    readiness: createDeliveryReadiness(database, { local: storage.local, objectstore }),
  };
}
