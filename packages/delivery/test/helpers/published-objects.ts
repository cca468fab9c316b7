import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { contentTypeFor } from "../../src/storage/content-type.js";
import { LocalObjectStore } from "../../src/storage/local-store.js";
import type { ObjectStore } from "../../src/storage/object-store.js";
import { s3EndpointOf } from "../storage/s3-server.js";

/** A published object as a downloader receives it. */
export interface PublishedObject {
  readonly size: number;
  readonly contentType: string;
  readonly body: Readable;
}

/**
 * Reads an object the public way, as a downloader would: over the bucket's URL on the object
 * store (s3rver answers anonymous GETs), or from the folder `/files` serves for local storage,
 * with the type `/files` sends. Null when there is no such object.
 */
export async function readPublished(
  store: ObjectStore,
  bucket: string,
  key: string,
): Promise<PublishedObject | null> {
  if (store instanceof LocalObjectStore) {
    const path = store.pathOf(bucket, key);
    const info = await stat(path).catch(() => null);
    if (!info?.isFile()) return null;
    return { size: info.size, contentType: contentTypeFor(key), body: createReadStream(path) };
  }
  const endpoint = s3EndpointOf(store);
  if (!endpoint) throw new Error("readPublished: a store from startS3Server or a LocalObjectStore");
  const path = key.split("/").map(encodeURIComponent).join("/");
  const answer = await fetch(`${endpoint}/${bucket}/${path}`);
  if (answer.status === 404) {
    await answer.body?.cancel();
    return null;
  }
  if (!answer.ok || !answer.body) throw new Error(`GET ${bucket}/${key} answered ${answer.status}`);
  return {
    size: Number(answer.headers.get("content-length")),
    contentType: answer.headers.get("content-type") ?? "",
    body: Readable.fromWeb(answer.body as WebReadableStream<Uint8Array>),
  };
}
