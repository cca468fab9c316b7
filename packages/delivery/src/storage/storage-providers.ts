import { join } from "node:path";
import type { Config } from "../config.js";
import { INCOMING_DIR, LocalObjectStore } from "./local-store.js";
import type { ObjectStore, StorageProvider } from "./object-store.js";
import { S3ObjectStore } from "./s3-store.js";

/** The storage providers a declaration may name, and each one's default public base URL. */
export interface StorageProviders {
  readonly local: LocalObjectStore;
  /** Null when `OBJECTSTORE_*` is not configured. */
  readonly objectstore: ObjectStore | null;
  /** Default `delivery_url` for a bucket when the declaration sets none (null: none known). */
  defaultDeliveryUrl(provider: StorageProvider, bucket: string): string | null;
}

/**
 * The providers of the configuration: `local` under `LOCAL_STORAGE_DIR` (served by this
 * service at `/files`), and `objectstore` when `OBJECTSTORE_ENDPOINT` and its keys are set.
 * Default public URLs: `<PUBLIC_URL>/files/<bucket>` and the path-style
 * `<OBJECTSTORE_ENDPOINT>/<bucket>`.
 */
export function storageFromConfig(config: Config): StorageProviders {
  const { endpoint, region, accessKeyId, secretAccessKey } = config.objectstore;
  const objectstore =
    endpoint && accessKeyId && secretAccessKey
      ? new S3ObjectStore({ endpoint, region, accessKeyId, secretAccessKey })
      : null;
  const serviceUrl = config.publicUrl ?? `http://localhost:${config.port}`;
  return {
    local: new LocalObjectStore(config.localStorageDir),
    objectstore,
    defaultDeliveryUrl: (provider, bucket) => {
      if (provider === "local") return `${serviceUrl}/files/${bucket}`;
      return endpoint ? `${endpoint}/${bucket}` : null;
    },
  };
}

/** Where zip archives wait while their entries are published: beside the local files, on disk. */
export function spoolDirFor(config: Config): string {
  return join(config.localStorageDir, INCOMING_DIR);
}
