import { Readable } from "node:stream";
import type {
  ReadableStreamReadResult,
  ReadableStream as WebReadableStream,
} from "node:stream/web";
import { CodeHostUnavailable } from "../../errors.js";

/**
 * A Node stream over a download's body. The request is aborted when no byte arrives for
 * `idleMs` while the stream waits for one (a whole-request timeout would cut large downloads
 * that are progressing; time spent waiting on a slow consumer does not count), and when the
 * stream is destroyed early. Any failure of the body becomes one `CodeHostUnavailable` saying
 * how far the download got, raised as the stream's error (never thrown elsewhere).
 */
export function downloadStream(
  body: WebReadableStream<Uint8Array>,
  controller: AbortController,
  idleMs: number,
  size: number | null,
): Readable {
  const reader = body.getReader();
  let complete = false;
  async function* chunks(): AsyncGenerator<Buffer> {
    let received = 0;
    for (;;) {
      const idle = setTimeout(() => controller.abort(), idleMs);
      let read: ReadableStreamReadResult<Uint8Array>;
      try {
        read = await reader.read();
      } catch (error) {
        const progress = `after ${received}${size === null ? "" : ` of ${size}`} bytes`;
        throw controller.signal.aborted
          ? CodeHostUnavailable(`The download stalled ${progress} (nothing for ${idleMs} ms)`)
          : CodeHostUnavailable(`The download broke off ${progress}: ${causeOf(error)}`);
      } finally {
        clearTimeout(idle);
      }
      if (read.done) {
        complete = true;
        return;
      }
      received += read.value.byteLength;
      yield Buffer.from(read.value.buffer, read.value.byteOffset, read.value.byteLength);
    }
  }
  const stream = Readable.from(chunks(), { objectMode: false });
  // Ends the request when the consumer gives up early. Not after a complete body: aborting
  // then would cost a DOMException and the signal's listeners for nothing, once per asset.
  stream.once("close", () => {
    if (!complete) controller.abort();
  });
  return stream;
}

/** The innermost message of a fetch failure (undici's "terminated" hides the socket's reason). */
function causeOf(error: unknown): string {
  let current = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}

/**
 * Aborts `controller` unless `headers` (a request's answer, before its body) settles within
 * `ms`: requests whose body is streamed carry the download's own signal, not the per-request
 * timeout, so this bounds the wait for their headers.
 */
export async function headersWithin<T>(
  controller: AbortController,
  ms: number,
  headers: Promise<T>,
) {
  const deadline = setTimeout(() => controller.abort(), ms);
  try {
    return await headers;
  } finally {
    clearTimeout(deadline);
  }
}

export function lengthOf(value: string | number | null | undefined): number | null {
  const length = Number(value);
  return value === undefined || value === null || !Number.isFinite(length) ? null : length;
}
