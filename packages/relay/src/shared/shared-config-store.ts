import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { type Logger, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "@rd/common";
import { resolveConfig, validateConfigFile } from "../config/config-loader.js";
import { ConfigPersistError, type ConfigStore } from "../config/config-store.js";
import type { RelayEnv } from "../config/env.js";
import { type ConfigFile, DEFAULTS, type RelayConfig } from "../config/schema.js";
import type { SharedDb } from "./shared-database.js";

/** The fields of the configuration every instance shares; the file keeps the rest (its node's). */
export const SHARED_FIELDS = [
  "domains",
  "allowlist",
  "api_rate_per_min",
  "send_delay_secs",
  "default_domain_limits",
] as const;
type SharedSettings = Pick<ConfigFile, (typeof SHARED_FIELDS)[number]>;

/** Where the settings document is named in errors (it lives in the database). */
const WHERE = "RELAY_DATABASE_URL";

// A key name is a file name in `kits_dir`: nothing that could leave it.
const KEY_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*\.pem$/;

/** The configuration store of an instance of several, with its refresh. */
export interface SharedConfigStore extends ConfigStore {
  /** Reads the shared settings again when `version` differs from the one last read. */
  refresh(version: number): Promise<void>;
}

function sharedPart(file: ConfigFile): SharedSettings {
  const part: SharedSettings = {};
  for (const field of SHARED_FIELDS) {
    if (file[field] !== undefined) Object.assign(part, { [field]: file[field] });
  }
  return part;
}

function localPart(file: ConfigFile): ConfigFile {
  const part = { ...file };
  for (const field of SHARED_FIELDS) delete part[field];
  return part;
}

/** Writes a key file 0600 under a temporary name, then renames it: never half a key. */
async function writeKeyFile(path: string, pem: string): Promise<void> {
  const temp = `${path}.${randomBytes(4).toString("hex")}.tmp`;
  const file = await open(temp, "wx", PRIVATE_FILE_MODE);
  try {
    await file.writeFile(pem, "utf8");
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, path);
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * The configuration of one instance among several (`RELAY_DATABASE_URL`). The shared fields
 * (domains, allowlist, rate limits) are one JSON document in the database, with a version
 * number; the node's own fields stay in the file (`RELAY_CONFIG`), which is no longer rewritten.
 *
 * DKIM private keys live in `relay_dkim_keys`, by name; each instance keeps a copy of every key
 * in its own `kits_dir` (0600), written before a snapshot that names it is published, so the
 * signer, the DNS kit and the DNS check read a local file as in the embedded relay. In the
 * document a domain's `key_path` is that name; in the snapshot it is the local path.
 *
 * `update` runs the change on the document read under a row lock (`SELECT … FOR UPDATE`), so
 * the changes of all instances apply one after the other, never over each other.
 */
export async function createSharedConfigStore(deps: {
  db: SharedDb;
  /** The file as loaded at boot; its shared fields are imported on the first boot only. */
  file: ConfigFile;
  env: RelayEnv;
  logger: Logger;
}): Promise<SharedConfigStore> {
  const { db, env, logger } = deps;
  const local = localPart(deps.file);
  const kitsDir = resolve(env.configDir, local.kits_dir ?? DEFAULTS.kits_dir);
  let document: SharedSettings = {};
  let snapshot: RelayConfig;
  let version = -1;
  let queue: Promise<unknown> = Promise.resolve();
  const listeners = new Set<(config: RelayConfig) => void>();

  const keyName = (keyPath: string) => basename(keyPath);

  /** The file as this instance sees it: its own fields, the shared ones, local key paths. */
  function merged(shared: SharedSettings): ConfigFile {
    const domains = Object.fromEntries(
      Object.entries(shared.domains ?? {}).map(([name, entry]) => [
        name,
        { ...entry, key_path: join(kitsDir, entry.key_path) },
      ]),
    );
    return structuredClone({ ...local, ...shared, domains });
  }

  /** Copies the keys the document names and this instance lacks from the database. */
  async function fetchKeys(shared: SharedSettings): Promise<void> {
    const missing: string[] = [];
    for (const entry of Object.values(shared.domains ?? {})) {
      if (!KEY_NAME.test(entry.key_path)) {
        throw new Error(`DKIM key name ${JSON.stringify(entry.key_path)} is not a file name`);
      }
      if (!(await exists(join(kitsDir, entry.key_path)))) missing.push(entry.key_path);
    }
    if (missing.length === 0) return;
    await mkdir(kitsDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    const rows = await db
      .selectFrom("relay_dkim_keys")
      .selectAll()
      .where("name", "in", missing)
      .execute();
    for (const row of rows) await writeKeyFile(join(kitsDir, row.name), row.pem);
  }

  /** Removes this instance's copies of keys the document no longer names. */
  async function dropKeys(before: SharedSettings, after: SharedSettings): Promise<void> {
    const kept = new Set(Object.values(after.domains ?? {}).map((entry) => entry.key_path));
    for (const entry of Object.values(before.domains ?? {})) {
      if (!kept.has(entry.key_path)) await rm(join(kitsDir, entry.key_path), { force: true });
    }
  }

  function publish(shared: SharedSettings, next: number): void {
    const file = validateConfigFile(merged(shared), WHERE);
    snapshot = resolveConfig(file, env);
    document = shared;
    version = next;
    for (const listener of listeners) listener(snapshot);
  }

  async function load(): Promise<void> {
    const row = await db
      .selectFrom("relay_shared")
      .select(["settings", "settings_version"])
      .where("id", "=", 1)
      .executeTakeFirstOrThrow();
    const shared = JSON.parse(row.settings) as SharedSettings;
    await fetchKeys(shared);
    const before = document;
    publish(shared, Number(row.settings_version));
    await dropKeys(before, shared);
  }

  /** First boot on an empty database: the file's domains (with their keys), limits, allowlist. */
  async function importFile(): Promise<void> {
    const present = await db
      .selectFrom("relay_shared")
      .select("id")
      .where("id", "=", 1)
      .executeTakeFirst();
    if (present) return;
    const shared = structuredClone(sharedPart(deps.file));
    const keys: Array<{ name: string; pem: string }> = [];
    for (const entry of Object.values(shared.domains ?? {})) {
      keys.push({ name: keyName(entry.key_path), pem: await readFile(entry.key_path, "utf8") });
      entry.key_path = keyName(entry.key_path);
    }
    const imported = await db.transaction().execute(async (trx) => {
      if (keys.length > 0) await trx.insertInto("relay_dkim_keys").ignore().values(keys).execute();
      const result = await trx
        .insertInto("relay_shared")
        .ignore()
        .values({
          id: 1,
          settings: JSON.stringify(shared),
          settings_version: 1,
          clients_version: 1,
        })
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    });
    if (imported) {
      logger.info("shared database was empty: imported the configuration file's settings", {
        domains: Object.keys(shared.domains ?? {}).length,
      });
    }
  }

  const apply = async <T>(change: (draft: ConfigFile) => T | Promise<T>): Promise<T> => {
    let failedInChange = false;
    try {
      const { result, shared, next, before } = await db.transaction().execute(async (trx) => {
        const row = await trx
          .selectFrom("relay_shared")
          .select(["settings", "settings_version"])
          .where("id", "=", 1)
          .forUpdate()
          .executeTakeFirstOrThrow();
        const current = JSON.parse(row.settings) as SharedSettings;
        await fetchKeys(current);
        const draft = merged(current);
        failedInChange = true;
        const result = await change(draft);
        failedInChange = false;
        const nextShared = sharedPart(validateConfigFile(draft, WHERE));
        // Keys of new domains go to the database with the document that names them.
        const known = new Set(Object.values(current.domains ?? {}).map((e) => e.key_path));
        for (const entry of Object.values(nextShared.domains ?? {})) {
          const name = keyName(entry.key_path);
          if (!known.has(name)) {
            const pem = await readFile(entry.key_path, "utf8");
            await trx.insertInto("relay_dkim_keys").values({ name, pem }).execute();
          }
          entry.key_path = name;
        }
        const kept = new Set(Object.values(nextShared.domains ?? {}).map((e) => e.key_path));
        const dropped = [...known].filter((name) => !kept.has(name));
        if (dropped.length > 0) {
          await trx.deleteFrom("relay_dkim_keys").where("name", "in", dropped).execute();
        }
        const next = Number(row.settings_version) + 1;
        await trx
          .updateTable("relay_shared")
          .set({ settings: JSON.stringify(nextShared), settings_version: next })
          .where("id", "=", 1)
          .execute();
        return { result, shared: nextShared, next, before: current };
      });
      publish(shared, next);
      await dropKeys(before, shared);
      return result;
    } catch (error) {
      if (failedInChange) throw error;
      throw new ConfigPersistError(error);
    }
  };

  /** One change or refresh at a time, in order. */
  function serial<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  }

  await importFile();
  await load();

  return {
    current: () => snapshot,
    update: (change) => serial(() => apply(change)),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    refresh: (next) => serial(async () => (next === version ? undefined : load())),
  };
}
