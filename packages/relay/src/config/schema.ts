import { type Static, Type } from "@rd/common/typebox";

/**
 * The configuration file (`RELAY_CONFIG`, default `relay.json`): every field of the
 * specification's table plus the additions of decisions.md. All fields are optional in the
 * file; `DEFAULTS` below gives what applies when a field is absent. Unknown fields are refused
 * at boot, so a typo is caught instead of silently ignored.
 *
 * To add a field: declare it here (optional, with a one-line comment), give its default in
 * `DEFAULTS`, and it appears in `RelayConfig` (resolved) automatically.
 */

/**
 * Inclusive ranges of the bounded numeric settings, at boot and through the HTTP API alike.
 * Beyond them a value is a slip of the keyboard, and a duration could pass Node's timer limit
 * (2^31 - 1 ms, about 24.8 days), past which a timer fires at once: a gate of 3,000,000 s
 * would then be no gate at all.
 */
export const RANGES = {
  // RFC 5321 §4.5.3.2: the longest wait it suggests (DATA termination) is 10 minutes.
  smtp_timeout_secs: { min: 0, max: 600 },
  // Ten years.
  retention_days: { min: 0, max: 3650 },
  // Each value: an HTTP request waits through them, so 10 minutes at most.
  sync_retry_delays_secs: { min: 0, max: 600 },
  // Each value: 30 days.
  queue_backoff_secs: { min: 0, max: 2_592_000 },
  // One day.
  tick_interval_secs: { min: 0, max: 86_400 },
  // One hour.
  send_delay_secs: { min: 0, max: 3600 },
  // Whole requests; 1000 a second.
  api_rate_per_min: { min: 0, max: 60_000 },
  // Whole recipients, each window.
  per_hour: { min: 0, max: 1_000_000 },
  per_day: { min: 0, max: 1_000_000 },
} as const;

/** Most attempts on the synchronous schedule (one value each). */
export const MAX_SYNC_ATTEMPTS = 10;

/**
 * Attempts a queued delivery gets: the entry is `failed` when its 5th attempt fails
 * (specification, "Queue entry"; decisions: the last backoff value is then unused).
 */
export const MAX_QUEUE_ATTEMPTS = 5;

type Bounded = keyof typeof RANGES;
/** A number (fractions allowed, as decisions.md says of every `*_secs` field) in its range. */
const Bounded = (field: Bounded, description: string) =>
  Type.Number({ minimum: RANGES[field].min, maximum: RANGES[field].max, description });
/** A whole number in its range. */
const BoundedCount = (field: Bounded, description: string) =>
  Type.Integer({ minimum: RANGES[field].min, maximum: RANGES[field].max, description });
const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const LimitsSchema = Type.Object(
  {
    per_hour: BoundedCount("per_hour", "messages (recipients) per UTC hour; 0 = no limit"),
    per_day: BoundedCount("per_day", "messages (recipients) per UTC day; 0 = no limit"),
  },
  { additionalProperties: false },
);
export const ApiRatePerMinSchema = BoundedCount(
  "api_rate_per_min",
  "API requests per minute per IP; 0 = throttle off",
);
export const SendDelaySecsSchema = Bounded(
  "send_delay_secs",
  "minimum gap between two delivery attempts; 0 = no gate",
);
export type Limits = Static<typeof LimitsSchema>;

export const DomainConfigSchema = Type.Object(
  {
    selector: Type.String({ minLength: 1, description: "DKIM selector" }),
    key_path: Type.String({ minLength: 1, description: "absolute path of the PEM private key" }),
    // An old configuration without status loads as `active` (see `resolveConfig`).
    status: Type.Optional(Type.Union([Type.Literal("pending"), Type.Literal("active")])),
    limits: Type.Optional(LimitsSchema),
    require_tls: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const ConfigFileSchema = Type.Object(
  {
    listen: Type.Optional(Type.String({ minLength: 1 })),
    helo_hostname: Type.Optional(Type.String({ minLength: 1 })),
    smtp_timeout_secs: Type.Optional(Bounded("smtp_timeout_secs", "timeout per SMTP dialog step")),
    domains: Type.Optional(Type.Record(Type.String(), DomainConfigSchema)),
    kits_dir: Type.Optional(Type.String({ minLength: 1 })),
    smtp_listen: Type.Optional(Type.String({ minLength: 1 })),
    smtp_max_size: Type.Optional(Count("max message size on the SMTP listener")),
    smtp_tls_cert: Type.Optional(Type.String({ minLength: 1 })),
    smtp_tls_key: Type.Optional(Type.String({ minLength: 1 })),
    smtp_require_tls: Type.Optional(Type.Boolean()),
    retention_days: Type.Optional(
      Bounded("retention_days", "days a finished delivery stays queryable"),
    ),
    require_tls: Type.Optional(Type.Boolean()),
    ledger_file: Type.Optional(Type.String({ minLength: 1 })),
    ledger_max_bytes: Type.Optional(Count("ledger file size before rotation; 0 = unlimited")),
    mx_override: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()))),
    public_ip: Type.Optional(Type.String({ minLength: 1 })),
    trusted_proxies: Type.Optional(Type.Array(Type.String())),
    sync_retry_delays_secs: Type.Optional(
      Type.Array(Bounded("sync_retry_delays_secs", "wait before an attempt"), {
        maxItems: MAX_SYNC_ATTEMPTS,
      }),
    ),
    queue_backoff_secs: Type.Optional(
      Type.Array(Bounded("queue_backoff_secs", "wait after a failed attempt"), {
        maxItems: MAX_QUEUE_ATTEMPTS,
      }),
    ),
    tick_interval_secs: Type.Optional(
      Bounded("tick_interval_secs", "internal queue ticker period; 0 = off"),
    ),
    dmarc_rua: Type.Optional(Type.String({ minLength: 1 })),
    allowlist: Type.Optional(Type.Array(Type.String())),
    api_rate_per_min: Type.Optional(ApiRatePerMinSchema),
    send_delay_secs: Type.Optional(SendDelaySecsSchema),
    default_domain_limits: Type.Optional(LimitsSchema),
  },
  { additionalProperties: false },
);
/** The configuration file as written on disk (absent fields stay absent when rewritten). */
export type ConfigFile = Static<typeof ConfigFileSchema>;

/** A domain with its defaults applied. */
export interface DomainConfig {
  readonly selector: string;
  readonly key_path: string;
  readonly status: "pending" | "active";
  /** Per-domain override; absent means `default_domain_limits` applies. */
  readonly limits?: Limits;
  readonly require_tls?: boolean;
}

/** The configuration with every default applied; what the rest of the relay reads. */
export interface RelayConfig {
  readonly listen: string;
  readonly helo_hostname: string | undefined;
  readonly smtp_timeout_secs: number;
  readonly domains: Readonly<Record<string, DomainConfig>>;
  /** Absolute. */
  readonly kits_dir: string;
  readonly smtp_listen: string | undefined;
  readonly smtp_max_size: number;
  readonly smtp_tls_cert: string | undefined;
  readonly smtp_tls_key: string | undefined;
  readonly smtp_require_tls: boolean;
  readonly retention_days: number;
  readonly require_tls: boolean;
  /** Absolute; `RELAY_LEDGER_FILE` wins over the file's `ledger_file`. */
  readonly ledger_file: string | undefined;
  readonly ledger_max_bytes: number;
  readonly mx_override: Readonly<Record<string, readonly string[]>>;
  readonly public_ip: string | undefined;
  readonly trusted_proxies: readonly string[];
  readonly sync_retry_delays_secs: readonly number[];
  readonly queue_backoff_secs: readonly number[];
  readonly tick_interval_secs: number;
  /** Absent: `dmarc@<domain>` per domain. */
  readonly dmarc_rua: string | undefined;
  readonly allowlist: readonly string[];
  readonly api_rate_per_min: number;
  readonly send_delay_secs: number;
  readonly default_domain_limits: Limits;
}

/** Defaults of the specification and decisions.md. */
export const DEFAULTS = {
  listen: "0.0.0.0:8080",
  // Seconds per SMTP dialog step.
  smtp_timeout_secs: 30,
  // Relative to the configuration file's directory.
  kits_dir: "keys",
  // 5 MiB, the same ceiling as `/send`.
  smtp_max_size: 5_242_880,
  smtp_require_tls: false,
  retention_days: 7,
  require_tls: false,
  // 50 MiB.
  ledger_max_bytes: 52_428_800,
  // Loopback only: a reverse proxy on the same machine.
  trusted_proxies: ["127.0.0.1/8", "::1/128"],
  // Immediately, then +5 s, +10 s, +30 s.
  sync_retry_delays_secs: [0, 5, 10, 30],
  // 1 min, 5 min, 15 min, 1 h, 4 h.
  queue_backoff_secs: [60, 300, 900, 3600, 14400],
  tick_interval_secs: 60,
  // Empty allowlist = every address may call.
  allowlist: [] as string[],
  api_rate_per_min: 20,
  send_delay_secs: 3,
  default_domain_limits: { per_hour: 20, per_day: 100 },
  selector: "relay",
} as const;
