import type { Clock } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import type { RateLimit, RateLimitSource } from "../codehost/code-host.js";
import type { DialectKind } from "../db/dialect.js";

/** How long a code-host rate limit reading is reused: /monitor/status is public and cheap. */
export const RATE_LIMIT_CACHE_MS = 30_000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** Counts releases processed since a moment (implemented by the release history). */
export interface ReleaseActivity {
  countProcessedSince(since: Date): Promise<number>;
}

export interface HealthProbe {
  isHealthy(): Promise<boolean>;
}

export interface StatusSources {
  readonly version: string;
  readonly repos: { counts(): Promise<{ active: number; total: number }> };
  readonly releases: ReleaseActivity;
  readonly database: HealthProbe;
  /** Which database that is (`services.database`). */
  readonly databaseKind: DialectKind;
  /** The S3-compatible object store; null when none is configured (reported as false). */
  readonly objectstore: HealthProbe | null;
  readonly codehost: RateLimitSource;
  /** Whether the periodic scheduler runs (the scheduler's state). */
  readonly scheduler: { readonly running: boolean; readonly nextRoundAt: Date | null };
  readonly schedulerIntervalMinutes: number;
  readonly clock: Clock;
}

const NullableInt = Type.Union([Type.Integer(), Type.Null()]);

/** The `GET /monitor/status` document: the wire schema and its type. */
export const SystemStatus = Type.Object({
  version: Type.String(),
  repositories: Type.Object({ active: Type.Integer(), total: Type.Integer() }),
  releases_last_24h: Type.Integer(),
  /** Null fields when the code host could not be asked. */
  codehost_rate_limit: Type.Object({
    limit: NullableInt,
    remaining: NullableInt,
    used: NullableInt,
    reset: NullableInt,
  }),
  services: Type.Object({
    /** The database's health, whatever its kind (the field predates `database`). */
    mysql: Type.Boolean({ description: "the database answers (SQLite or MySQL alike)" }),
    database: Type.Union([Type.Literal("sqlite"), Type.Literal("mysql")], {
      description: "the kind of database in use",
    }),
    objectstore: Type.Boolean(),
  }),
  scheduler: Type.Object({
    running: Type.Boolean(),
    interval_minutes: Type.Integer(),
    next_round_at: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
      description: "when this instance's next scheduler tick is due; null when not running",
    }),
  }),
});
export type SystemStatus = Static<typeof SystemStatus>;

const UNKNOWN_RATE_LIMIT = { limit: null, remaining: null, used: null, reset: null };

/** Gathers the system status; every source is asked concurrently. */
export class StatusService {
  private rateLimitCache: { value: RateLimit; at: number } | undefined;

  constructor(private readonly sources: StatusSources) {}

  async status(): Promise<SystemStatus> {
    const { sources } = this;
    const now = sources.clock.now();
    const databaseUp = await sources.database.isHealthy();
    // With the database down, its counters cannot be read: report what is known.
    const [counts, releases, objectstore, rateLimit] = await Promise.all([
      databaseUp ? sources.repos.counts() : { active: 0, total: 0 },
      databaseUp ? sources.releases.countProcessedSince(new Date(now.getTime() - DAY_MS)) : 0,
      sources.objectstore ? sources.objectstore.isHealthy() : false,
      this.codehostRateLimit(),
    ]);
    return {
      version: sources.version,
      repositories: counts,
      releases_last_24h: releases,
      codehost_rate_limit: rateLimit ?? UNKNOWN_RATE_LIMIT,
      services: { mysql: databaseUp, database: sources.databaseKind, objectstore },
      scheduler: {
        running: sources.scheduler.running,
        interval_minutes: sources.schedulerIntervalMinutes,
        next_round_at: sources.scheduler.nextRoundAt?.toISOString() ?? null,
      },
    };
  }

  /** The code host's rate limit, asked at most every `RATE_LIMIT_CACHE_MS`; null when it fails. */
  async codehostRateLimit(): Promise<RateLimit | null> {
    const now = this.sources.clock.now().getTime();
    const cached = this.rateLimitCache;
    if (cached && now - cached.at < RATE_LIMIT_CACHE_MS) return cached.value;
    try {
      const value = await this.sources.codehost.getRateLimit();
      this.rateLimitCache = { value, at: now };
      return value;
    } catch {
      return null;
    }
  }
}
