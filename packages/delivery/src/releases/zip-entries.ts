import { mkdir, open, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "@rd/common";
import type { Entry, ZipFile } from "yauzl";
import { ByteCounter } from "../storage/byte-counter.js";
import { keyProblem } from "../storage/object-store.js";
import { scratchFileName } from "../storage/scratch-files.js";

/** One file inside a zip archive, opened on demand (entries are read one at a time). */
export interface ZipFileEntry {
  /** The entry's path inside the archive, checked to be relative and free of `..`. */
  readonly path: string;
  /** Uncompressed size declared by the archive (yauzl verifies it while reading). */
  readonly size: number;
  open(): Promise<Readable>;
}

/**
 * Bytes an archive may expand to (sum of the written entries' sizes). A zip bomb otherwise
 * fills the storage; 20 GiB is far above any release archive we expect.
 */
const MAX_EXPANDED_BYTES = 20 * 1024 ** 3;

interface ZipWalk {
  /** Files handed to the visitor. */
  readonly files: number;
  /** One message per entry refused because its path could escape the destination. */
  readonly refused: readonly string[];
}

export interface ZipStreamWalk extends ZipWalk {
  /** Bytes of the archive itself. */
  readonly size: number;
}

/**
 * Streams `source` (a zip archive) to a temp file — a zip's directory is at its end, so it
 * cannot be read as it arrives — then hands each file entry to `visit`, one at a time.
 * Directories are skipped; entries with absolute paths, drive letters, backslashes or `..`
 * are refused and reported, never visited. The temp file is removed in every case, and
 * `source` is consumed or destroyed in every case.
 */
export async function walkZipStream(
  source: Readable,
  tempDir: string,
  visit: (entry: ZipFileEntry) => Promise<void>,
  maxExpandedBytes = MAX_EXPANDED_BYTES,
): Promise<ZipStreamWalk> {
  // NOTE: the source may fail while the temp folder is being created, before `pipeline`
  // listens; this listener keeps that from being an uncaught error (pipeline still sees it).
  source.once("error", () => {});
  const path = join(tempDir, scratchFileName(".zip"));
  const counter = new ByteCounter();
  try {
    await mkdir(tempDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    // NOTE: the file is open before the first byte is read. A write stream opening it on its
    // own could still be opening it when a download failing at once ends the pipeline: the
    // removal below then found nothing, and the file appeared after it (seen under load).
    const scratch = await open(path, "wx", PRIVATE_FILE_MODE);
    await pipeline(source, counter, scratch.createWriteStream());
    return { ...(await walkZipFile(path, visit, maxExpandedBytes)), size: counter.bytes };
  } finally {
    source.destroy();
    await rm(path, { force: true });
  }
}

/** Visits the file entries of the zip archive at `path` (see `walkZipStream`). */
async function walkZipFile(
  path: string,
  visit: (entry: ZipFileEntry) => Promise<void>,
  maxExpandedBytes = MAX_EXPANDED_BYTES,
): Promise<ZipWalk> {
  // NOTE: with decodeStrings on, yauzl fails the WHOLE archive on one unsafe name; decoding
  // names ourselves lets us refuse just that entry. strictFileNames keeps backslashes as they
  // are (yauzl would otherwise turn them into `/`), so `..\..\x` is seen and refused.
  // NOTE: loaded at the first archive, not at boot: an idle service does not hold it.
  const { default: yauzl } = await import("yauzl");
  const zip = await yauzl.openPromise(path, {
    lazyEntries: true,
    autoClose: false,
    decodeStrings: false,
    validateEntrySizes: true,
    strictFileNames: true,
  });
  const refused: string[] = [];
  let files = 0;
  let expanded = 0;
  try {
    for (;;) {
      const entry = await nextEntry(zip);
      if (!entry) break;
      const name = yauzl.getFileNameLowLevel(
        entry.generalPurposeBitFlag,
        entry.fileNameRaw,
        entry.extraFields,
        true,
      );
      if (name.endsWith("/")) continue;
      const problem = keyProblem(name);
      if (problem) {
        refused.push(`zip entry ${JSON.stringify(name)} refused: ${problem}`);
        continue;
      }
      if (expanded + entry.uncompressedSize > maxExpandedBytes) {
        refused.push(
          `zip entry ${JSON.stringify(name)} refused: the archive expands beyond ${maxExpandedBytes} bytes`,
        );
        continue;
      }
      expanded += entry.uncompressedSize;
      files += 1;
      await visit({
        path: name,
        size: entry.uncompressedSize,
        open: () => zip.openReadStreamPromise(entry),
      });
    }
  } finally {
    zip.close();
  }
  return { files, refused };
}

function nextEntry(zip: ZipFile): Promise<Entry | null> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      zip.off("entry", onEntry);
      zip.off("end", onEnd);
      zip.off("error", onError);
    };
    const onEntry = (entry: Entry) => {
      cleanup();
      resolve(entry);
    };
    const onEnd = () => {
      cleanup();
      resolve(null);
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    zip.once("entry", onEntry);
    zip.once("end", onEnd);
    zip.once("error", onError);
    zip.readEntry();
  });
}
