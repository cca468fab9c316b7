import { writeFileAtomic } from "./atomic-file.js";
import { resolveConfig, serializeConfig, validateConfigFile } from "./config-loader.js";
import type { RelayEnv } from "./env.js";
import type { ConfigFile, RelayConfig } from "./schema.js";

/** Raised by `ConfigStore.update` when the new file could not be written; nothing changed. */
export class ConfigPersistError extends Error {
  constructor(cause: unknown) {
    super(`configuration file could not be written: ${(cause as Error).message}`, { cause });
    this.name = "ConfigPersistError";
  }
}

/**
 * The live configuration. `current()` is a frozen snapshot (cheap, call it per use rather than
 * keeping it); `update()` changes the file and the snapshot together, one update at a time.
 */
export interface ConfigStore {
  current(): RelayConfig;
  /**
   * Applies `change` to a private copy of the file, writes it atomically, and only then
   * publishes the new snapshot. `change` may throw (an `AppError`, for example) to abort
   * without writing; a write failure throws `ConfigPersistError` and leaves everything as it was.
   * Returns what `change` returned.
   */
  update<T>(change: (file: ConfigFile) => T | Promise<T>): Promise<T>;
  /** Calls `listener` with each new snapshot; returns the unsubscribe function. */
  onChange(listener: (config: RelayConfig) => void): () => void;
}

export function createConfigStore(initial: ConfigFile, env: RelayEnv): ConfigStore {
  let file = structuredClone(initial);
  let snapshot = resolveConfig(structuredClone(file), env);
  let queue: Promise<unknown> = Promise.resolve();
  const listeners = new Set<(config: RelayConfig) => void>();

  const apply = async <T>(change: (draft: ConfigFile) => T | Promise<T>): Promise<T> => {
    const draft = structuredClone(file);
    const result = await change(draft);
    // The draft must still be a valid file: a bug here must not reach the disk.
    const next = validateConfigFile(draft, env.configPath);
    const nextSnapshot = resolveConfig(structuredClone(next), env);
    try {
      await writeFileAtomic(env.configPath, serializeConfig(next));
    } catch (error) {
      throw new ConfigPersistError(error);
    }
    file = next;
    snapshot = nextSnapshot;
    for (const listener of listeners) listener(snapshot);
    return result;
  };

  return {
    current: () => snapshot,
    update(change) {
      const run = queue.then(() => apply(change));
      queue = run.catch(() => undefined);
      return run;
    },
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
