import { randomBytes } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { KyselyPlugin, RootOperationNode } from "@rd/common/kysely";
import { MARIADB, makeTempDir, serviceAvailable } from "@rd/common/test-kit";
import { createConnection } from "mysql2/promise";
import { afterEach, beforeEach } from "vitest";
import { parseListenAddress } from "../../src/config/listen-address.js";
import type { ConfigFile } from "../../src/config/schema.js";
import { openSharedDatabase, type SharedDb } from "../../src/shared/shared-database.js";
import { writeKey } from "../helpers/key-file.js";
import { RelayProcess } from "../helpers/relay-process.js";

const MARIADB_ROOT = `mysql://root@${MARIADB.host}:${MARIADB.port}`;

/** Whether MariaDB is here; loud skip without it, a failure under CI=true. */
export const mariadbAvailable = () => serviceAvailable(MARIADB);

/** A database of the test's own on the local MariaDB, dropped at the end. */
export interface TestSharedDatabase {
  readonly url: string;
  /** Runs one statement on it as root (to inspect or break the shared state). */
  query<T = unknown>(statement: string, values?: unknown[]): Promise<T>;
  drop(): Promise<void>;
}

export async function createSharedDatabase(): Promise<TestSharedDatabase> {
  const name = `relay_test_${randomBytes(6).toString("hex")}`;
  const admin = await createConnection(MARIADB_ROOT);
  await admin.query(`CREATE DATABASE \`${name}\``);
  return {
    url: `${MARIADB_ROOT}/${name}`,
    async query<T>(statement: string, values: unknown[] = []) {
      await admin.query(`USE \`${name}\``);
      const [rows] = await admin.query(statement, values);
      return rows as T;
    },
    async drop() {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await admin.end();
    },
  };
}

/**
 * The statements a Kysely instance builds, by their first word (raw SQL included), and the
 * queries it sends to the server (`sent`; a transaction's own BEGIN and COMMIT are not counted,
 * Kysely sends them past its plugins).
 */
export function countingStatements(db: SharedDb): {
  db: SharedDb;
  counts: Map<string, number>;
  sent: { count: number };
} {
  const counts = new Map<string, number>();
  const sent = { count: 0 };
  const verb = (node: RootOperationNode): string => {
    if (node.kind !== "RawNode") return node.kind;
    return (node.sqlFragments[0] ?? "").trim().split(/\s/)[0]?.toUpperCase() ?? "";
  };
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      counts.set(verb(node), (counts.get(verb(node)) ?? 0) + 1);
      return node;
    },
    async transformResult({ result }) {
      sent.count += 1;
      return result;
    },
  };
  return { db: db.withPlugin(plugin), counts, sent };
}

/**
 * Registers the hooks that give each test of the suite a database of its own, opened with the
 * relay's own pool (migrations applied) and dropped after it.
 */
export function useSharedDb(): { readonly database: TestSharedDatabase; readonly db: SharedDb } {
  const handle = {} as { database: TestSharedDatabase; db: SharedDb };
  beforeEach(async () => {
    handle.database = await createSharedDatabase();
    handle.db = await openSharedDatabase(handle.database.url);
  });
  afterEach(async () => {
    await handle.db.destroy();
    await handle.database.drop();
  });
  return handle;
}

/** A relay process on the shared database, with its own folder, file and SQLite queue. */
export interface SharedInstance {
  readonly name: string;
  readonly process: RelayProcess;
  readonly dir: string;
  /** `http://127.0.0.1:<port>` */
  readonly base: string;
  /**
   * The SMTP submission port when `smtp_listen` is set. NOTE: give `127.0.0.1:0` and read it
   * here: a port found free beforehand may be taken meanwhile as the local port of some other
   * connection (the relays' own to MariaDB among them), and the start fails with EADDRINUSE.
   */
  readonly smtpPort: number | undefined;
  request(method: string, path: string, body?: unknown, auth?: string): Promise<Response>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `relay serve` on `url` as instance `name`: listening on a free loopback port, no admin
 * token (admin endpoints and /send open), its own folder. `config` is its file (`listen` added);
 * `env` adds variables (`RELAY_REDIS` for the asynchronous mode).
 */
export async function startInstance(
  name: string,
  url: string,
  options: {
    config?: (dir: string) => Promise<ConfigFile> | ConfigFile;
    env?: Record<string, string>;
  } = {},
): Promise<SharedInstance> {
  const temp = await makeTempDir(`relay-shared-${name}-`);
  const config = { listen: "127.0.0.1:0", ...(await options.config?.(temp.path)) };
  await writeFile(join(temp.path, "relay.json"), JSON.stringify(config));
  const process = await RelayProcess.start({
    RELAY_CONFIG: join(temp.path, "relay.json"),
    RELAY_DATABASE_URL: url,
    RELAY_INSTANCE: name,
    ...options.env,
  });
  const bound = (message: string) =>
    process
      .records()
      .map((record) => record.fields as { message?: string; listen?: string })
      .find((fields) => fields.message === message)?.listen;
  const base = `http://${bound("relay listening")}`;
  const smtp = bound("smtp submission listening");
  return {
    name,
    process,
    dir: temp.path,
    base,
    smtpPort: smtp === undefined ? undefined : parseListenAddress(smtp).port,
    request(method, path, body, auth) {
      return fetch(`${base}${path}`, {
        method,
        headers: {
          ...(body !== undefined && { "content-type": "application/json" }),
          ...(auth && { authorization: `Basic ${Buffer.from(auth).toString("base64")}` }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    },
    async stop(signal = "SIGTERM") {
      const code = await process.stop(signal);
      await temp.remove();
      return code;
    },
  };
}

/** Polls `check` until it holds or `timeoutMs` passes; resolves with how long it took. */
export async function within(
  timeoutMs: number,
  check: () => Promise<boolean>,
  what: string,
): Promise<number> {
  const started = Date.now();
  while (!(await check())) {
    if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return Date.now() - started;
}

/** A ready message from `from` to `to`, for `/send-raw`. */
export function rawMessage(from: string, to: string): { from: string; to: string[]; raw: string } {
  return {
    from,
    to: [to],
    raw: `From: ${from}\r\nTo: ${to}\r\nSubject: shared\r\n\r\nhello\r\n`,
  };
}

/** The file of the first instance: an active domain `shop.test` with its key, imported at boot. */
export async function firstInstanceConfig(
  dir: string,
  extra: ConfigFile = {},
  limits = { per_hour: 1000, per_day: 1000 },
): Promise<ConfigFile> {
  return {
    api_rate_per_min: 0,
    send_delay_secs: 0,
    domains: {
      "shop.test": {
        selector: "relay",
        key_path: await writeKey(dir, "shop.test.relay.pem"),
        status: "active",
        limits,
      },
    },
    ...extra,
  };
}

/** Creates a client for `shop.test` on `on`; returns its `id:secret` credential. */
export async function createClient(on: SharedInstance): Promise<string> {
  const created = (await (
    await on.request("POST", "/clients", { name: "shop", domains: ["shop.test"] })
  ).json()) as { client_id: string; secret: string };
  return `${created.client_id}:${created.secret}`;
}
