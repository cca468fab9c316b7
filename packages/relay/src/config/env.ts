import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import { ConfigError, type EnvironmentVariable, type LogFilter, parseLogFilter } from "@rd/common";
import { parseDnsServer } from "../addresses/host-port.js";

// Defaults of relay.md's environment table.
const DEFAULT_CONFIG_FILE = "relay.json";
const DEFAULT_STATE_DIR_NAME = "state";

/** Every variable `parseEnv` reads, for the help of `relay`. */
export const RELAY_ENVIRONMENT: readonly EnvironmentVariable[] = [
  { name: "RELAY_CONFIG", about: "configuration file, JSON", default: DEFAULT_CONFIG_FILE },
  { name: "RELAY_AUTH_TOKEN", about: "admin token; unset or empty leaves the API open" },
  {
    name: "RELAY_DB",
    about: "directory of the state database and the spool",
    default: `<config dir>/${DEFAULT_STATE_DIR_NAME}`,
  },
  {
    name: "RELAY_REDIS",
    about: "present (any value): asynchronous mode; a redis:// URL also shares the API throttle",
  },
  {
    name: "RELAY_DATABASE_URL",
    about: "mysql://user:pass@host:3306/db: shared state of several instances",
    default: "the local SQLite state and configuration file",
  },
  { name: "RELAY_INSTANCE", about: "this instance's name in log lines", default: "the host name" },
  { name: "RELAY_LEDGER_FILE", about: "ledger file; overrides ledger_file" },
  { name: "RELAY_DNS", about: "DNS server, IP[:port]", default: "the system resolver" },
  { name: "RUST_LOG", about: "log filter, e.g. relay::ledger=info", default: "info" },
];

/** What the relay takes from its environment, parsed once at boot. */
export interface RelayEnv {
  /** Absolute path of the configuration file (`RELAY_CONFIG`, default `relay.json`). */
  readonly configPath: string;
  readonly configDir: string;
  /** `RELAY_AUTH_TOKEN`; undefined when unset or empty (the instance is then open). */
  readonly authToken: string | undefined;
  /** Directory of the state database (`RELAY_DB`, default `<config dir>/state`). */
  readonly dbDir: string;
  /** `RELAY_REDIS` is present: asynchronous mode. Only its presence matters. */
  readonly asyncMode: boolean;
  /** `RELAY_REDIS` when it is a `redis://` or `rediss://` URL: the API throttle is counted there. */
  readonly redisUrl: string | undefined;
  /** `RELAY_DATABASE_URL` (`mysql://…`): shared state in that database; undefined = embedded. */
  readonly databaseUrl: string | undefined;
  /** `RELAY_INSTANCE`, default the host name: names this instance in log lines (shared mode). */
  readonly instance: string;
  /** `RELAY_LEDGER_FILE`, absolute; overrides the file's `ledger_file`. */
  readonly ledgerFile: string | undefined;
  /** `RELAY_DNS` checked by `parseDnsServer`; undefined = system resolver. */
  readonly dnsServer: string | undefined;
  /** `RUST_LOG`, default `info`. */
  readonly logFilter: LogFilter;
}

/**
 * Reads the relay's environment variables. `cwd` anchors relative paths.
 * Throws `ConfigError` naming the variable when a value is unusable.
 */
export function parseEnv(
  vars: Readonly<Record<string, string | undefined>>,
  cwd: string = process.cwd(),
): RelayEnv {
  const configPath = resolve(cwd, vars.RELAY_CONFIG || DEFAULT_CONFIG_FILE);
  const configDir = dirname(configPath);
  let dnsServer: string | undefined;
  if (vars.RELAY_DNS) {
    try {
      dnsServer = parseDnsServer(vars.RELAY_DNS);
    } catch (error) {
      throw new ConfigError("RELAY_DNS", (error as Error).message);
    }
  }
  let logFilter: LogFilter;
  try {
    logFilter = parseLogFilter(vars.RUST_LOG);
  } catch (error) {
    throw new ConfigError("RUST_LOG", (error as Error).message);
  }
  const databaseUrl = vars.RELAY_DATABASE_URL || undefined;
  if (databaseUrl !== undefined && !/^mysql:\/\/[^/]+\/[^/?]+/.test(databaseUrl)) {
    throw new ConfigError(
      "RELAY_DATABASE_URL",
      "must be a mysql://user:password@host:port/database URL (MariaDB 10.6+ or MySQL 8)",
    );
  }
  const redis = vars.RELAY_REDIS;
  return Object.freeze({
    configPath,
    configDir,
    authToken: vars.RELAY_AUTH_TOKEN ? vars.RELAY_AUTH_TOKEN : undefined,
    dbDir: resolve(cwd, vars.RELAY_DB || resolve(configDir, DEFAULT_STATE_DIR_NAME)),
    asyncMode: redis !== undefined,
    redisUrl: redis !== undefined && /^rediss?:\/\//.test(redis) ? redis : undefined,
    databaseUrl,
    instance: vars.RELAY_INSTANCE || hostname(),
    ledgerFile: vars.RELAY_LEDGER_FILE ? resolve(cwd, vars.RELAY_LEDGER_FILE) : undefined,
    dnsServer,
    logFilter,
  });
}

/** What names the ledger file in a start-up error: `RELAY_LEDGER_FILE`, else the file's field. */
export function ledgerFileCulprit(env: RelayEnv): { where: string; field?: string } {
  return env.ledgerFile
    ? { where: "RELAY_LEDGER_FILE" }
    : { where: env.configPath, field: "ledger_file" };
}
