import { createPrivateKey } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { ConfigError, deepFreeze, type EnvironmentVariable, parseLogFilter } from "@rd/common";

/** Where the data lives: a SQLite file (the default) or a MySQL/MariaDB server. */
export type DatabaseConfig =
  | { readonly kind: "sqlite"; readonly file: string }
  | { readonly kind: "mysql"; readonly url: string };

/** The service's configuration, parsed once from the environment and frozen. */
export interface Config {
  /** Interface the HTTP server binds to (`HOST`, default all interfaces). */
  readonly host: string;
  readonly port: number;
  readonly database: DatabaseConfig;
  /** `X-API-Key` value; when unset, API-key-only endpoints refuse every request. */
  readonly apiKey: string | undefined;
  readonly hostingWebhookSecret: string | undefined;
  /** When unset, main.ts generates one and persists it beside the database (see jwt-secret.ts). */
  readonly jwtSecret: string | undefined;
  readonly codehost: {
    readonly apiUrl: string;
    readonly token: string | undefined;
    /** A download that sends nothing for this long is given up (and retried). */
    readonly downloadIdleTimeoutSeconds: number;
  };
  /** The service's own base URL (no trailing slash); https turns on the `Secure` cookie flag. */
  readonly publicUrl: string | undefined;
  readonly objectstore: {
    readonly endpoint: string | undefined;
    readonly region: string;
    readonly accessKeyId: string | undefined;
    readonly secretAccessKey: string | undefined;
  };
  readonly localStorageDir: string;
  /**
   * Serve active content (HTML, SVG, XML, JavaScript…) under `/files` inline instead of as a
   * download. Off by default: a download never renders on this service's origin.
   */
  readonly filesInlineActiveContent: boolean;
  /** 0 turns the scheduler off. */
  readonly schedulerIntervalMinutes: number;
  /** A release claim older than this belongs to an instance presumed dead and is taken over. */
  readonly releaseClaimLeaseSeconds: number;
  /** `Cache-Control: max-age` of `latest/` and prerelease channels (versioned files: a year). */
  readonly latestMaxAgeSeconds: number;
  /** Small files (assets up to 2 MiB, docs) a publication transfers at once. */
  readonly publishConcurrency: number;
  /** Ed25519 private key (PEM) that signs each published `SHA256SUMS`; unset: no signature. */
  readonly releaseSigningKey: string | undefined;
  readonly telegram: {
    readonly botToken: string | undefined;
    readonly chatId: string | undefined;
    readonly apiUrl: string;
  };
  /** `RUST_LOG`-style filter (`info`, `debug`, `delivery::http=debug`). */
  readonly logFilter: string | undefined;
}

// Defaults of the decisions document, each in one place.
const DEFAULT_PORT = 8081;
const DEFAULT_HOST = "0.0.0.0";
const DEFAULT_SQLITE_FILE = "./data/delivery.db";
const DEFAULT_CODEHOST_API_URL = "https://api.github.com";
const DEFAULT_LOCAL_STORAGE_DIR = "./data/files";
const DEFAULT_SCHEDULER_INTERVAL_MINUTES = 10;
/** Active content under /files is a download unless asked otherwise (see `Config`). */
const DEFAULT_FILES_INLINE_ACTIVE_CONTENT = false;
/** A download is cut after a minute without a byte (also the code-host client's default). */
export const DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS = 60;
/**
 * A release claim left unrenewed this long (30 minutes) belongs to an instance presumed dead;
 * a live publish renews its claim every third of it. Also the processor's own default.
 */
export const DEFAULT_RELEASE_CLAIM_LEASE_SECONDS = 30 * 60;
const DAY_SECONDS = 24 * 60 * 60;
/** Caches keep `latest/` five minutes: a new release reaches downloaders within that. */
export const DEFAULT_LATEST_MAX_AGE_SECONDS = 300;
/**
 * Six small transfers at once: enough to hide the round trips of many small assets (API call,
 * redirect, upload each), few enough that memory stays bounded (at most 2 MiB each).
 */
export const DEFAULT_PUBLISH_CONCURRENCY = 6;
const DEFAULT_TELEGRAM_API_URL = "https://api.telegram.org";
/** S3 clients need a region even for S3-compatible servers that ignore it. */
const DEFAULT_OBJECTSTORE_REGION = "us-east-1";
/** HS256 keys shorter than the hash output (256 bits) weaken the signature (RFC 7518 §3.2). */
const MIN_JWT_SECRET_LENGTH = 32;

/** Every variable `loadConfig` reads, one line each, for the help of `delivery`. */
export const DELIVERY_ENVIRONMENT: readonly EnvironmentVariable[] = [
  { name: "HOST", about: "interface the HTTP server listens on", default: DEFAULT_HOST },
  { name: "PORT", about: "HTTP port (0: any free port)", default: String(DEFAULT_PORT) },
  {
    name: "DATABASE_URL",
    about: "mysql://user:pass@host:port/db, or sqlite:<path>",
    default: `sqlite:${DEFAULT_SQLITE_FILE}`,
  },
  { name: "API_KEY", about: "X-API-Key value; unset: API-key-only endpoints refuse every call" },
  { name: "HOSTING_WEBHOOK_SECRET", about: "code-host webhook signature secret; unset: refused" },
  {
    name: "JWT_SECRET",
    about: "login token key, at least 32 characters",
    default: "generated once, kept beside the database",
  },
  { name: "CODEHOST_API_URL", about: "code-host API base", default: DEFAULT_CODEHOST_API_URL },
  { name: "CODEHOST_TOKEN", about: "code-host token (unset: anonymous, rate-limited)" },
  {
    name: "CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS",
    about: "a download silent this long is retried",
    default: String(DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS),
  },
  { name: "PUBLIC_URL", about: "the service's own base URL; https: Secure cookies" },
  { name: "OBJECTSTORE_ENDPOINT", about: "S3-compatible endpoint URL (objectstore provider)" },
  { name: "OBJECTSTORE_REGION", about: "S3 region", default: DEFAULT_OBJECTSTORE_REGION },
  { name: "OBJECTSTORE_ACCESS_KEY", about: "S3 access key id, with the secret key" },
  { name: "OBJECTSTORE_SECRET_KEY", about: "S3 secret key, with the access key id" },
  {
    name: "LOCAL_STORAGE_DIR",
    about: "root of the local storage provider",
    default: DEFAULT_LOCAL_STORAGE_DIR,
  },
  {
    name: "FILES_INLINE_ACTIVE_CONTENT",
    about: "true: serve HTML, SVG, JavaScript under /files inline",
    default: String(DEFAULT_FILES_INLINE_ACTIVE_CONTENT),
  },
  {
    name: "SCHEDULER_INTERVAL_MINUTES",
    about: "minutes between scheduler rounds; 0: off",
    default: String(DEFAULT_SCHEDULER_INTERVAL_MINUTES),
  },
  {
    name: "RELEASE_CLAIM_LEASE_SECONDS",
    about: "a dead instance's release claim is taken over after this",
    default: String(DEFAULT_RELEASE_CLAIM_LEASE_SECONDS),
  },
  {
    name: "LATEST_MAX_AGE_SECONDS",
    about: "Cache-Control max-age of latest/ and prerelease channels",
    default: String(DEFAULT_LATEST_MAX_AGE_SECONDS),
  },
  {
    name: "PUBLISH_CONCURRENCY",
    about: "small files (assets up to 2 MiB, docs) transferred at once",
    default: String(DEFAULT_PUBLISH_CONCURRENCY),
  },
  {
    name: "RELEASE_SIGNING_KEY",
    about: "Ed25519 private key (PEM) signing SHA256SUMS; unset: unsigned",
  },
  { name: "TELEGRAM_BOT_TOKEN", about: "Telegram bot token, with the chat id" },
  { name: "TELEGRAM_CHAT_ID", about: "Telegram chat that receives notifications" },
  { name: "TELEGRAM_API_URL", about: "Telegram Bot API base", default: DEFAULT_TELEGRAM_API_URL },
  { name: "RUST_LOG", about: "log filter, e.g. warn,delivery::http=debug", default: "info" },
];

type Env = Readonly<Record<string, string | undefined>>;

/** An unset or blank variable is absent. */
function optional(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `expected a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(name, `expected a number between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return fallback;
  if (raw !== "true" && raw !== "false") {
    throw new ConfigError(name, `expected true or false, got "${raw}"`);
  }
  return raw === "true";
}

function httpUrl(env: Env, name: string, fallback?: string): string | undefined {
  const raw = optional(env, name) ?? fallback;
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `expected an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(name, `expected an http(s) URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, "");
}

function sqliteFile(path: string): string {
  return isAbsolute(path) ? path : resolve(path);
}

function database(env: Env): DatabaseConfig {
  const raw = optional(env, "DATABASE_URL");
  if (raw === undefined) return { kind: "sqlite", file: sqliteFile(DEFAULT_SQLITE_FILE) };
  if (/^(mysql|mariadb):\/\//i.test(raw)) {
    try {
      const url = new URL(raw);
      if (!url.hostname || url.pathname.length <= 1) throw new Error("incomplete");
    } catch {
      throw new ConfigError("DATABASE_URL", "expected mysql://user:password@host:port/database");
    }
    // NOTE: mysql2 only understands the mysql: scheme.
    return { kind: "mysql", url: raw.replace(/^mariadb:/i, "mysql:") };
  }
  const sqlite = /^(?:sqlite|file):(?:\/\/)?(.+)$/i.exec(raw);
  if (sqlite?.[1]) return { kind: "sqlite", file: sqliteFile(sqlite[1]) };
  throw new ConfigError(
    "DATABASE_URL",
    `expected mysql://… or sqlite:<path>, got "${raw.replace(/:[^:@/]*@/, ":***@")}"`,
  );
}

function pair(env: Env, first: string, second: string): [string | undefined, string | undefined] {
  const a = optional(env, first);
  const b = optional(env, second);
  if (a !== undefined && b === undefined)
    throw new ConfigError(second, `required when ${first} is set`);
  if (b !== undefined && a === undefined)
    throw new ConfigError(first, `required when ${second} is set`);
  return [a, b];
}

/**
 * `RELEASE_SIGNING_KEY` as PEM text, checked to be an Ed25519 private key. NOTE: environment
 * files (systemd, Docker) hold one line per variable, so a literal `\n` stands for a newline.
 */
function signingKey(env: Env): string | undefined {
  const name = "RELEASE_SIGNING_KEY";
  const raw = optional(env, name);
  if (raw === undefined) return undefined;
  const pem = raw.replaceAll("\\n", "\n");
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch (error) {
    // The parser's reason names no byte of the key.
    throw new ConfigError(
      name,
      `cannot be read as a PEM private key (${(error as Error).message})`,
    );
  }
  if (type !== "ed25519") {
    throw new ConfigError(name, `expected an Ed25519 private key, got ${type ?? "another kind"}`);
  }
  return pem;
}

/** Parses the environment once; throws `ConfigError` naming the first bad variable. */
export function loadConfig(env: Env): Config {
  const logFilter = optional(env, "RUST_LOG");
  try {
    parseLogFilter(logFilter);
  } catch (error) {
    throw new ConfigError("RUST_LOG", (error as Error).message);
  }
  const jwtSecret = optional(env, "JWT_SECRET");
  if (jwtSecret !== undefined && jwtSecret.length < MIN_JWT_SECRET_LENGTH) {
    throw new ConfigError("JWT_SECRET", `must be at least ${MIN_JWT_SECRET_LENGTH} characters`);
  }
  const [accessKeyId, secretAccessKey] = pair(
    env,
    "OBJECTSTORE_ACCESS_KEY",
    "OBJECTSTORE_SECRET_KEY",
  );
  const [botToken, chatId] = pair(env, "TELEGRAM_BOT_TOKEN", "TELEGRAM_CHAT_ID");

  const config: Config = {
    host: optional(env, "HOST") ?? DEFAULT_HOST,
    port: integer(env, "PORT", DEFAULT_PORT, 0, 65535),
    database: database(env),
    apiKey: optional(env, "API_KEY"),
    hostingWebhookSecret: optional(env, "HOSTING_WEBHOOK_SECRET"),
    jwtSecret,
    codehost: {
      apiUrl: httpUrl(env, "CODEHOST_API_URL", DEFAULT_CODEHOST_API_URL) as string,
      token: optional(env, "CODEHOST_TOKEN"),
      downloadIdleTimeoutSeconds: integer(
        env,
        "CODEHOST_DOWNLOAD_IDLE_TIMEOUT_SECONDS",
        DEFAULT_DOWNLOAD_IDLE_TIMEOUT_SECONDS,
        1,
        DAY_SECONDS,
      ),
    },
    publicUrl: httpUrl(env, "PUBLIC_URL"),
    objectstore: {
      endpoint: httpUrl(env, "OBJECTSTORE_ENDPOINT"),
      region: optional(env, "OBJECTSTORE_REGION") ?? DEFAULT_OBJECTSTORE_REGION,
      accessKeyId,
      secretAccessKey,
    },
    localStorageDir: resolve(optional(env, "LOCAL_STORAGE_DIR") ?? DEFAULT_LOCAL_STORAGE_DIR),
    filesInlineActiveContent: flag(
      env,
      "FILES_INLINE_ACTIVE_CONTENT",
      DEFAULT_FILES_INLINE_ACTIVE_CONTENT,
    ),
    schedulerIntervalMinutes: integer(
      env,
      "SCHEDULER_INTERVAL_MINUTES",
      DEFAULT_SCHEDULER_INTERVAL_MINUTES,
      0,
      7 * 24 * 60,
    ),
    releaseClaimLeaseSeconds: integer(
      env,
      "RELEASE_CLAIM_LEASE_SECONDS",
      DEFAULT_RELEASE_CLAIM_LEASE_SECONDS,
      1,
      7 * DAY_SECONDS,
    ),
    latestMaxAgeSeconds: integer(
      env,
      "LATEST_MAX_AGE_SECONDS",
      DEFAULT_LATEST_MAX_AGE_SECONDS,
      0,
      365 * DAY_SECONDS,
    ),
    publishConcurrency: integer(env, "PUBLISH_CONCURRENCY", DEFAULT_PUBLISH_CONCURRENCY, 1, 32),
    releaseSigningKey: signingKey(env),
    telegram: {
      botToken,
      chatId,
      apiUrl: httpUrl(env, "TELEGRAM_API_URL", DEFAULT_TELEGRAM_API_URL) as string,
    },
    logFilter,
  };
  return deepFreeze(config);
}
