import type { Readable } from "node:stream";
import {
  assertBucketName,
  assertSafeKey,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from "./object-store.js";
import {
  PartBuffers,
  SEND_BUDGET_BYTES,
  SendBudget,
  type UploadShared,
  uploadObject,
} from "./s3-uploads.js";

export interface S3StoreOptions {
  readonly endpoint: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Keys per ListObjectsV2 page (S3 caps it at 1000). */
  readonly listPageSize?: number;
}

/** DeleteObjects accepts at most 1000 keys per call. */
const DELETE_BATCH = 1000;
/** A key a batch delete refused is tried once more (transient per-key errors exist). */
const DELETE_ATTEMPTS = 2;
/** Keys named in the error of a partial delete; the rest are counted. */
const FAILED_KEYS_SHOWN = 5;
/** How long the health check waits for the object store. */
const HEALTH_TIMEOUT_MS = 3000;

/** The AWS SDK, the client built with it, and what the uploads of the store share. */
type S3Connection = UploadShared;

async function connect(options: S3StoreOptions): Promise<S3Connection> {
  const sdk = await import("@aws-sdk/client-s3");
  const client = new sdk.S3Client({
    endpoint: options.endpoint,
    region: options.region,
    credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey },
    forcePathStyle: true,
    // NOTE: SDK ≥ 3.729 adds checksum trailers by default; R2, s3rver and older MinIO reject
    // or mis-store them. Only send/verify checksums where the S3 API requires them.
    requestChecksumCalculation: "WHEN_REQUIRED",
    responseChecksumValidation: "WHEN_REQUIRED",
  });
  return { sdk, client, budget: new SendBudget(SEND_BUDGET_BYTES), buffers: new PartBuffers() };
}

/**
 * An S3-compatible object store (path-style addressing, custom endpoint). The AWS SDK (some
 * 10 MiB of memory) is loaded on first use, not at boot: an idle service never pays for it.
 */
export class S3ObjectStore implements ObjectStore {
  readonly provider = "objectstore" as const;
  private readonly listPageSize: number;
  private connection: Promise<S3Connection> | undefined;

  constructor(private readonly options: S3StoreOptions) {
    this.listPageSize = options.listPageSize ?? 1000;
  }

  private connected(): Promise<S3Connection> {
    this.connection ??= connect(this.options);
    return this.connection;
  }

  async put(
    bucket: string,
    key: string,
    body: Readable,
    options: PutOptions,
  ): Promise<{ size: number }> {
    assertBucketName(bucket);
    assertSafeKey(key);
    // NOTE: the source may fail while the SDK loads, before the upload reads it; this listener
    // keeps that from being an uncaught error (the upload's read still sees it).
    body.once("error", () => {});
    const params = {
      Bucket: bucket,
      Key: key,
      ContentType: options.contentType,
      ...(options.cacheControl === undefined ? {} : { CacheControl: options.cacheControl }),
    };
    try {
      const size = await uploadObject(await this.connected(), params, body, options.contentLength);
      return { size };
    } catch (error) {
      // A failed upload reads no further: the source is cut.
      body.destroy();
      throw error;
    }
  }

  async *list(bucket: string, prefix: string): AsyncIterable<StoredObject> {
    assertBucketName(bucket);
    const { sdk, client } = await this.connected();
    let continuationToken: string | undefined;
    do {
      const page = await client.send(
        new sdk.ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix,
          MaxKeys: this.listPageSize,
          ContinuationToken: continuationToken,
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key === undefined) continue;
        yield {
          key: object.Key,
          size: object.Size ?? 0,
          lastModified: object.LastModified ?? new Date(0),
        };
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);
  }

  /**
   * Deletes in batches of 1000. S3 answers a batch with per-key errors rather than failing it
   * (a bucket policy or object lock refusing some keys, an InternalError or SlowDown on others):
   * the keys that failed are tried once more, every batch is still attempted, and what is left
   * fails the call with each key's code, so a caller never takes a partial delete for success.
   */
  async delete(bucket: string, keys: readonly string[]): Promise<void> {
    assertBucketName(bucket);
    const { sdk, client } = await this.connected();
    const deleteBatch = async (batch: readonly string[]) => {
      const answer = await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      return (answer.Errors ?? []).map((error) => ({
        key: error.Key ?? "?",
        why: `${error.Code ?? "error"}: ${error.Message ?? "no message"}`,
      }));
    };
    const failed: Array<{ key: string; why: string }> = [];
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const refused = await deleteBatch(keys.slice(start, start + DELETE_BATCH));
      if (refused.length > 0) failed.push(...(await deleteBatch(refused.map(({ key }) => key))));
    }
    if (failed.length > 0) {
      const shown = failed.slice(0, FAILED_KEYS_SHOWN).map(({ key, why }) => `${key} (${why})`);
      const more =
        failed.length > FAILED_KEYS_SHOWN ? `, and ${failed.length - FAILED_KEYS_SHOWN} more` : "";
      throw new Error(
        `could not delete ${failed.length} of ${keys.length} object(s) after ${DELETE_ATTEMPTS} attempts: ${shown.join(", ")}${more}`,
      );
    }
  }

  async isHealthy(): Promise<boolean> {
    try {
      const { sdk, client } = await this.connected();
      await client.send(new sdk.ListBucketsCommand({}), {
        abortSignal: AbortSignal.timeout(HEALTH_TIMEOUT_MS),
      });
      return true;
    } catch {
      return false;
    }
  }

  /** Closes the client's sockets (once it is connected, if it is connecting). */
  close(): void {
    void this.connection?.then(({ client }) => client.destroy());
  }
}
