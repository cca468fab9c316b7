import { mkdir, readFile } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import { ConfigError, deepFreeze, PRIVATE_DIR_MODE } from "@rd/common";
import { TypeCompiler } from "@rd/common/typebox";
import { normalizeDomainName } from "../addresses/domain-name.js";
import { parseAddressRange } from "../addresses/ip-range.js";
import { writeFileAtomic } from "./atomic-file.js";
import type { RelayEnv } from "./env.js";
import { parseListenAddress } from "./listen-address.js";
import {
  type ConfigFile,
  ConfigFileSchema,
  DEFAULTS,
  type DomainConfig,
  type RelayConfig,
} from "./schema.js";

const checker = TypeCompiler.Compile(ConfigFileSchema);

/**
 * Reads the configuration file named by `env`. A missing file is created with defaults
 * (`listen`, empty `domains`, `kits_dir` beside it). Throws `ConfigError` naming the file and
 * the field when the file is unreadable or invalid.
 */
export async function loadConfigFile(env: RelayEnv): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(env.configPath, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
      throw new ConfigError(env.configPath, `cannot be read (${(error as Error).message})`);
    }
    const initial: ConfigFile = {
      listen: DEFAULTS.listen,
      domains: {},
      kits_dir: resolve(env.configDir, DEFAULTS.kits_dir),
    };
    try {
      await mkdir(env.configDir, { recursive: true, mode: PRIVATE_DIR_MODE });
      await writeFileAtomic(env.configPath, serializeConfig(initial));
    } catch (writeError) {
      throw new ConfigError(env.configPath, `cannot be created (${(writeError as Error).message})`);
    }
    return initial;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(env.configPath, `is not valid JSON (${(error as Error).message})`);
  }
  return validateConfigFile(parsed, env.configPath);
}

/** Checks a parsed file against the schema and the rules a schema cannot say. */
export function validateConfigFile(value: unknown, where: string): ConfigFile {
  const first = checker.Errors(value).First();
  if (first) {
    const field = first.path.replace(/^\//, "").replaceAll("/", ".") || "(root)";
    throw new ConfigError(where, first.message, field);
  }
  const file = value as ConfigFile;
  const check = (field: string, test: () => void) => {
    try {
      test();
    } catch (error) {
      throw new ConfigError(where, (error as Error).message, field);
    }
  };
  if (file.listen !== undefined) check("listen", () => parseListenAddress(file.listen ?? ""));
  if (file.smtp_listen !== undefined) {
    check("smtp_listen", () => parseListenAddress(file.smtp_listen ?? ""));
  }
  for (const [index, entry] of (file.trusted_proxies ?? []).entries()) {
    check(`trusted_proxies.${index}`, () => parseAddressRange(entry));
  }
  for (const [index, entry] of (file.allowlist ?? []).entries()) {
    check(`allowlist.${index}`, () => parseAddressRange(entry));
  }
  for (const [name, domain] of Object.entries(file.domains ?? {})) {
    check(`domains.${name}`, () => {
      if (normalizeDomainName(name) !== name) throw new Error("is not a lower-case domain name");
    });
    check(`domains.${name}.key_path`, () => {
      if (!isAbsolute(domain.key_path)) throw new Error("must be an absolute path");
    });
  }
  return file;
}

/** Applies defaults and environment overrides; the result is deeply frozen. */
export function resolveConfig(file: ConfigFile, env: RelayEnv): RelayConfig {
  const domains = ownRecord(
    Object.entries(file.domains ?? {}).map(([name, domain]): [string, DomainConfig] => [
      name,
      { ...domain, status: domain.status ?? "active" },
    ]),
  );
  const ledgerFile = env.ledgerFile ?? file.ledger_file;
  return deepFreeze({
    listen: file.listen ?? DEFAULTS.listen,
    helo_hostname: file.helo_hostname,
    smtp_timeout_secs: file.smtp_timeout_secs ?? DEFAULTS.smtp_timeout_secs,
    domains,
    kits_dir: resolve(env.configDir, file.kits_dir ?? DEFAULTS.kits_dir),
    smtp_listen: file.smtp_listen,
    smtp_max_size: file.smtp_max_size ?? DEFAULTS.smtp_max_size,
    smtp_tls_cert: file.smtp_tls_cert && resolve(env.configDir, file.smtp_tls_cert),
    smtp_tls_key: file.smtp_tls_key && resolve(env.configDir, file.smtp_tls_key),
    smtp_require_tls: file.smtp_require_tls ?? DEFAULTS.smtp_require_tls,
    retention_days: file.retention_days ?? DEFAULTS.retention_days,
    require_tls: file.require_tls ?? DEFAULTS.require_tls,
    ledger_file: ledgerFile && resolve(env.configDir, ledgerFile),
    ledger_max_bytes: file.ledger_max_bytes ?? DEFAULTS.ledger_max_bytes,
    mx_override: ownRecord(Object.entries(file.mx_override ?? {})),
    public_ip: file.public_ip,
    trusted_proxies: file.trusted_proxies ?? DEFAULTS.trusted_proxies,
    sync_retry_delays_secs: file.sync_retry_delays_secs ?? DEFAULTS.sync_retry_delays_secs,
    queue_backoff_secs: file.queue_backoff_secs ?? DEFAULTS.queue_backoff_secs,
    tick_interval_secs: file.tick_interval_secs ?? DEFAULTS.tick_interval_secs,
    dmarc_rua: file.dmarc_rua,
    allowlist: file.allowlist ?? DEFAULTS.allowlist,
    api_rate_per_min: file.api_rate_per_min ?? DEFAULTS.api_rate_per_min,
    send_delay_secs: file.send_delay_secs ?? DEFAULTS.send_delay_secs,
    default_domain_limits: file.default_domain_limits ?? DEFAULTS.default_domain_limits,
  });
}

/** The file's text: two-space JSON with a final newline, as a person would write it. */
export function serializeConfig(file: ConfigFile): string {
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * A record without a prototype. Its keys are looked up with request data (a domain in a URL,
 * an envelope sender): `constructor` or `__proto__` must find nothing, not a built-in of every
 * plain object.
 */
function ownRecord<T>(entries: ReadonlyArray<readonly [string, T]>): Record<string, T> {
  const record: Record<string, T> = Object.create(null);
  for (const [key, value] of entries) record[key] = value;
  return record;
}
