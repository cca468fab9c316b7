import type { Readable } from "node:stream";
import { allocForMessage } from "../mime/headroom.js";

/** What DATA brought: the message, or only its size when it went over the cap. */
export type CollectedMessage =
  | { readonly oversize: false; readonly raw: Buffer }
  | { readonly oversize: true; readonly bytes: number };

/**
 * Reads a DATA stream into one buffer of at most `maxBytes`. Past the cap it stops keeping
 * chunks and reads the rest to its end without holding it, so the client can be answered
 * (552) once its message is over instead of in the middle of it.
 */
export function collectMessage(stream: Readable, maxBytes: number): Promise<CollectedMessage> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    stream.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes <= maxBytes) chunks.push(chunk);
      else chunks.length = 0;
    });
    let ended = false;
    stream.on("error", reject);
    // A client that leaves mid-message: smtp-server destroys the stream, which never ends.
    stream.on("close", () => {
      if (!ended) reject(new Error("the client left before the end of the message"));
    });
    stream.on("end", () => {
      ended = true;
      resolve(
        bytes > maxBytes
          ? { oversize: true, bytes }
          : { oversize: false, raw: joinChunks(chunks, bytes) },
      );
    });
  });
}

/** The chunks as one Buffer; a large one with headroom for the headers the relay adds. */
function joinChunks(chunks: readonly Buffer[], bytes: number): Buffer {
  const raw = allocForMessage(bytes);
  let at = 0;
  for (const chunk of chunks) at += chunk.copy(raw, at);
  return raw;
}
