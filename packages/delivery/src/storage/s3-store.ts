import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { S3Client } from "@aws-sdk/client-s3";
import { ByteCounter } from "./byte-counter.js";
import {
  assertBucketName,
  assertSafeKey,
  type ObjectStore,
  type PutOptions,
  type StoredObject,
} from "./object-store.js";

export interface S3StoreOptions {
  readonly endpoint: string;
  readonly region: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Keys per ListObjectsV2 page (S3 caps it at 1000). */
  readonly listPageSize?: number;
}

/** Multipart part size: 8 MiB keeps a 1 GiB asset at 128 parts, far below S3's 10,000. */
const PART_SIZE = 8 * 1024 * 1024;
/** Parts in flight per upload: memory per upload is bounded by PART_SIZE × UPLOAD_QUEUE_SIZE. */
const UPLOAD_QUEUE_SIZE = 2;
/** DeleteObjects accepts at most 1000 keys per call. */
const DELETE_BATCH = 1000;
/** How long the health check waits for the object store. */
const HEALTH_TIMEOUT_MS = 3000;

/** The AWS SDK modules and the client built with them. */
interface S3Connection {
  readonly sdk: typeof import("@aws-sdk/client-s3");
  readonly Upload: typeof import("@aws-sdk/lib-storage").Upload;
  readonly client: S3Client;
}

async function connect(options: S3StoreOptions): Promise<S3Connection> {
  const [sdk, { Upload }] = await Promise.all([
    import("@aws-sdk/client-s3"),
    import("@aws-sdk/lib-storage"),
  ]);
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
  return { sdk, Upload, client };
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
    const counted = new ByteCounter();
    // NOTE: started before the upload (which reads `counted` only after awaits of its own), so
    // an error of `body` or `counted` is handled from now on; it reaches the upload as the
    // failure of the stream it reads, and the multipart upload is aborted.
    const feeding = pipeline(body, counted);
    // Its failure is awaited below; until then (the SDK may still be loading) it is not unhandled.
    feeding.catch(() => {});
    try {
      const { Upload, client } = await this.connected();
      const upload = new Upload({
        client,
        params: {
          Bucket: bucket,
          Key: key,
          Body: counted,
          ContentType: options.contentType,
          ...(options.cacheControl === undefined ? {} : { CacheControl: options.cacheControl }),
          ...(options.contentLength === undefined ? {} : { ContentLength: options.contentLength }),
        },
        partSize: PART_SIZE,
        queueSize: UPLOAD_QUEUE_SIZE,
        leavePartsOnError: false,
      });
      await upload.done();
    } catch (error) {
      counted.destroy();
      await feeding.catch(() => {});
      throw error;
    }
    await feeding;
    return { size: counted.bytes };
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

  async delete(bucket: string, keys: readonly string[]): Promise<void> {
    assertBucketName(bucket);
    const { sdk, client } = await this.connected();
    for (let start = 0; start < keys.length; start += DELETE_BATCH) {
      const batch = keys.slice(start, start + DELETE_BATCH);
      const answer = await client.send(
        new sdk.DeleteObjectsCommand({
          Bucket: bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = answer.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0];
        throw new Error(
          `could not delete ${failed.length} object(s), first ${first?.Key}: ${first?.Message}`,
        );
      }
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
