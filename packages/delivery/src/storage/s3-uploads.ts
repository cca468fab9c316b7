import type { S3Client } from "@aws-sdk/client-s3";
import { releasedBytes } from "./young-garbage.js";

/** S3's smallest part but the last: the smaller the parts, the less memory each upload holds. */
export const PART_SIZE = 5 * 1024 * 1024;
/** S3's limit of parts per upload: a known length beyond 10,000 × PART_SIZE gets larger parts. */
const MAX_PARTS = 10_000;
/**
 * Bytes of bodies being sent at once across every upload of a store: two parts, so a large upload
 * sends one part while it fills the next, and concurrent uploads (the versioned and latest copies,
 * small files side by side) share the same bound instead of each adding its own. (One part
 * would hold 5 MiB less, but made the 1 GiB upload a third slower in a measured run.)
 */
export const SEND_BUDGET_BYTES = 2 * PART_SIZE;

/**
 * A shared bound on the bytes being sent. Past it an upload waits, and stops reading its source
 * (backpressure), until a body in flight is acknowledged; waiters are served in order. A body
 * larger than the whole budget (the parts of a huge known-length object) goes alone.
 */
export class SendBudget {
  private used = 0;
  private readonly waiting: Array<{ readonly bytes: number; readonly grant: () => void }> = [];

  constructor(private readonly limit: number) {}

  async acquire(bytes: number): Promise<void> {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return;
    }
    await new Promise<void>((grant) => this.waiting.push({ bytes, grant }));
  }

  release(bytes: number): void {
    this.used -= bytes;
    for (let next = this.waiting[0]; next && this.fits(next.bytes); next = this.waiting[0]) {
      this.waiting.shift();
      this.used += next.bytes;
      next.grant();
    }
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.limit;
  }
}

/**
 * Part buffers of PART_SIZE reused from one part to the next (no fresh 5 MiB allocation, and no
 * garbage, per part), and dropped once no upload runs, so an idle service holds none.
 */
export class PartBuffers {
  private free: Buffer[] = [];
  private uploads = 0;

  open(): void {
    this.uploads += 1;
  }

  close(): void {
    this.uploads -= 1;
    if (this.uploads === 0) this.free = [];
  }

  take(size: number): Buffer {
    return (size === PART_SIZE ? this.free.pop() : undefined) ?? Buffer.allocUnsafeSlow(size);
  }

  give(buffer: Buffer): void {
    if (buffer.length === PART_SIZE) this.free.push(buffer);
  }
}

export interface UploadShared {
  readonly sdk: typeof import("@aws-sdk/client-s3");
  readonly client: S3Client;
  readonly budget: SendBudget;
  readonly buffers: PartBuffers;
}

export interface UploadParams {
  readonly Bucket: string;
  readonly Key: string;
  readonly ContentType: string;
  readonly CacheControl?: string;
}

/**
 * Streams `source` to one object: a body that fits one part (or whose known length does) is one
 * PutObject; a larger one a multipart upload, each part copied once into a reused buffer and
 * sent under the shared budget. A known `contentLength` must be met exactly. On any failure the
 * multipart upload is aborted (no parts left behind) and the failure rethrown. Resolves with
 * the number of bytes stored.
 */
export async function uploadObject(
  shared: UploadShared,
  params: UploadParams,
  source: AsyncIterable<Buffer>,
  contentLength: number | undefined,
): Promise<number> {
  const { sdk, client, budget, buffers } = shared;
  const partSize = Math.max(PART_SIZE, Math.ceil((contentLength ?? 0) / MAX_PARTS));
  const single = contentLength !== undefined && contentLength <= partSize;
  let uploadId: string | undefined;
  const parts: Array<Promise<{ PartNumber: number; ETag: string | undefined }>> = [];
  let failure: { reason: unknown } | undefined;

  /** Sends a full part in the background once the budget allows; the buffer returns after. */
  const sendPart = async (body: Buffer) => {
    uploadId ??= (await client.send(new sdk.CreateMultipartUploadCommand(params))).UploadId;
    const PartNumber = parts.length + 1;
    await budget.acquire(body.length);
    const sent = client
      .send(
        new sdk.UploadPartCommand({
          Bucket: params.Bucket,
          Key: params.Key,
          UploadId: uploadId,
          PartNumber,
          Body: body,
        }),
      )
      .then(
        (answer) => {
          buffers.give(body);
          return { PartNumber, ETag: answer.ETag };
        },
        (reason: unknown) => {
          // The buffer is not reused: a failed request's socket may not be done with it.
          failure ??= { reason };
          throw reason;
        },
      )
      .finally(() => budget.release(body.length));
    sent.catch(() => {}); // awaited (and reported) below
    parts.push(sent);
  };

  buffers.open();
  try {
    let buffer = single ? Buffer.allocUnsafe(contentLength) : buffers.take(partSize);
    let filled = 0;
    let total = 0;
    for await (const chunk of source) {
      total += chunk.length;
      if (contentLength !== undefined && total > contentLength) {
        throw new Error(`more bytes than the announced ${contentLength}`);
      }
      for (let offset = 0; offset < chunk.length; ) {
        if (filled === buffer.length) {
          await sendPart(buffer);
          buffer = buffers.take(partSize);
          filled = 0;
        }
        const copied = chunk.copy(buffer, filled, offset);
        filled += copied;
        offset += copied;
      }
      // The chunk is dead once copied (see young-garbage.ts).
      releasedBytes(chunk.length);
      if (failure) throw failure.reason;
    }
    if (contentLength !== undefined && total !== contentLength) {
      throw new Error(`${total} bytes instead of the announced ${contentLength}`);
    }
    const last = buffer.subarray(0, filled);
    if (uploadId === undefined && parts.length === 0) {
      await budget.acquire(last.length);
      try {
        await client.send(new sdk.PutObjectCommand({ ...params, Body: last }));
      } finally {
        budget.release(last.length);
      }
      return total;
    }
    if (last.length > 0) await sendPart(last);
    const completed = await Promise.all(parts);
    await client.send(
      new sdk.CompleteMultipartUploadCommand({
        ...params,
        UploadId: uploadId,
        MultipartUpload: { Parts: completed },
      }),
    );
    return total;
  } catch (error) {
    await Promise.allSettled(parts);
    if (uploadId !== undefined) {
      const abort = new sdk.AbortMultipartUploadCommand({
        Bucket: params.Bucket,
        Key: params.Key,
        UploadId: uploadId,
      });
      await client.send(abort).catch((abortError: unknown) => {
        // The upload's own failure is the one to report; the abort's rides along.
        if (error instanceof Error && error.cause === undefined) error.cause = abortError;
      });
    }
    throw error;
  } finally {
    buffers.close();
  }
}
