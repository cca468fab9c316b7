import { makeTempDir } from "@rd/common/test-kit";
import S3rver from "s3rver";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { S3ObjectStore } from "../../src/storage/s3-store.js";

/** s3rver's fixed credentials. */
export const S3RVER_CREDENTIALS = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } as const;

export interface S3Server {
  readonly endpoint: string;
  /** A store configured the way `main.ts` configures one from `OBJECTSTORE_*`. */
  store(): S3ObjectStore;
  close(): Promise<void>;
}

/** The endpoint of each store `store()` made, for reading objects back over their public URL. */
const endpoints = new WeakMap<ObjectStore, string>();

/** The endpoint of a store made by an S3Server; undefined for any other store. */
export function s3EndpointOf(store: ObjectStore): string | undefined {
  return endpoints.get(store);
}

/** A real S3-compatible server (s3rver) on loopback, with the given buckets created. */
export async function startS3Server(buckets: readonly string[]): Promise<S3Server> {
  const directory = await makeTempDir("rd-s3rver-");
  const server = new S3rver({
    address: "127.0.0.1",
    port: 0,
    silent: true,
    directory: directory.path,
    configureBuckets: buckets.map((name) => ({ name, configs: [] })),
  });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const stores: S3ObjectStore[] = [];
  return {
    endpoint,
    store() {
      const store = new S3ObjectStore({ endpoint, region: "us-east-1", ...S3RVER_CREDENTIALS });
      stores.push(store);
      endpoints.set(store, endpoint);
      return store;
    },
    async close() {
      for (const store of stores) store.close();
      await server.close();
      await directory.remove();
    },
  };
}
