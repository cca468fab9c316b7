import { pipeline, type Readable, Transform, type TransformCallback } from "node:stream";
import type { CodeHostDownload, CodeHostRelease } from "../codehost/code-host.js";
import { DECLARATION_FILE, parseDeclaration } from "../releases/declaration.js";
import type { HistoryRecord } from "../releases/history-repository.js";
import type { ReleaseHost } from "../releases/processing-context.js";
import type { MonitorEvents } from "./monitor-events.js";

/** At most one progress event per file this often (the last one is always sent). */
const PROGRESS_INTERVAL_MS = 100;
/** Releases looked up but never published (already processed) are forgotten past this many. */
const MAX_TRACKED_RELEASES = 200;
/** A declaration larger than this is not parsed for the plan (the processor refuses it anyway). */
const MAX_DECLARATION_BYTES = 256 * 1024;

interface TrackedRelease {
  readonly repository: string;
  readonly release: CodeHostRelease;
  /** Bytes read so far per asset name (a retried download starts its file again). */
  readonly bytes: Map<string, number>;
}

const keyOf = (owner: string, name: string, tag: string) => `${owner}/${name}#${tag}`.toLowerCase();

/** Passes bytes through, telling how many went by (throttled, and once at the end). */
class ProgressCounter extends Transform {
  private bytes = 0;
  private lastReport = 0;

  constructor(private readonly report: (bytes: number, done: boolean) => void) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    const now = performance.now();
    if (now - this.lastReport >= PROGRESS_INTERVAL_MS) {
      this.lastReport = now;
      this.report(this.bytes, false);
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.report(this.bytes, true);
    callback();
  }
}

/**
 * Watches publications from the outside, so the publishing code needs no hook: it wraps the
 * code host the release processor reads from. A release's declaration being read at its tag
 * starts it (the processor reads it only once the release is claimed), asset downloads are
 * counted as storage consumes them (backpressure keeps the two in step), and the recorded
 * history record finishes it.
 */
export class PublicationTracker {
  private readonly releases = new Map<string, TrackedRelease>();

  constructor(private readonly events: MonitorEvents) {}

  /** The code host as the release processor should see it: the same answers, observed. */
  observe(host: ReleaseHost): ReleaseHost {
    return {
      getRepository: (owner, name) => host.getRepository(owner, name),
      listReleases: (owner, name) => host.listReleases(owner, name),
      getLatestRelease: async (owner, name) =>
        this.remember(owner, name, await host.getLatestRelease(owner, name)),
      getReleaseByTag: async (owner, name, tag) =>
        this.remember(owner, name, await host.getReleaseByTag(owner, name, tag)),
      getFileAtRef: async (owner, name, path, ref) => {
        const file = await host.getFileAtRef(owner, name, path, ref);
        const tracked = this.releases.get(keyOf(owner, name, ref));
        if (path !== DECLARATION_FILE || !tracked) return file;
        if (!file) {
          this.started(tracked, []);
          return file;
        }
        return { ...file, body: this.readPlan(tracked, name, file.body) };
      },
      downloadAsset: async (owner, name, assetId, signal) => {
        const download = await host.downloadAsset(owner, name, assetId, signal);
        return this.counted(owner, name, assetId, download);
      },
    };
  }

  /** The recorded outcome of a release (any trigger). */
  finished(record: HistoryRecord): void {
    const [owner = "", name = ""] = record.repository.split("/");
    this.releases.delete(keyOf(owner, name, record.tag));
    this.events.publish({
      type: "release_finished",
      repository: record.repository,
      tag: record.tag,
      status: record.status,
      trigger: record.trigger,
      files_count: record.files_count,
      total_bytes: record.total_bytes,
      errors: record.errors,
    });
  }

  private remember(
    owner: string,
    name: string,
    release: CodeHostRelease | null,
  ): CodeHostRelease | null {
    if (!release) return release;
    const key = keyOf(owner, name, release.tag);
    this.releases.delete(key);
    this.releases.set(key, { repository: `${owner}/${name}`, release, bytes: new Map() });
    if (this.releases.size > MAX_TRACKED_RELEASES) {
      const oldest = this.releases.keys().next().value;
      if (oldest !== undefined) this.releases.delete(oldest);
    }
    return release;
  }

  /** The declaration's bytes are copied as the processor reads them, then parsed for the plan. */
  private readPlan(tracked: TrackedRelease, folderName: string, body: Readable): Readable {
    const chunks: Buffer[] = [];
    let length = 0;
    const copy = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        length += chunk.length;
        if (length <= MAX_DECLARATION_BYTES) chunks.push(chunk);
        callback(null, chunk);
      },
      flush: (callback) => {
        const text = length > MAX_DECLARATION_BYTES ? "" : Buffer.concat(chunks).toString("utf8");
        const parsed = parseDeclaration(text, { folderName });
        const sources = parsed.ok ? parsed.declaration.artifacts.map((rule) => rule.source) : [];
        const assets = tracked.release.assets.filter((asset) => sources.includes(asset.name));
        this.started(tracked, assets);
        callback();
      },
    });
    pipeline(body, copy, () => {});
    return copy;
  }

  private started(tracked: TrackedRelease, assets: CodeHostRelease["assets"]): void {
    const files = assets.map((asset) => ({ file: asset.name, expected_bytes: asset.size }));
    this.events.publish({
      type: "release_started",
      repository: tracked.repository,
      tag: tracked.release.tag,
      files,
      expected_bytes: files.reduce((sum, file) => sum + file.expected_bytes, 0),
    });
  }

  private counted(
    owner: string,
    name: string,
    assetId: number,
    download: CodeHostDownload,
  ): CodeHostDownload {
    const prefix = `${owner}/${name}#`.toLowerCase();
    let tracked: TrackedRelease | undefined;
    for (const [key, candidate] of this.releases) {
      if (key.startsWith(prefix) && candidate.release.assets.some((a) => a.id === assetId)) {
        tracked = candidate;
      }
    }
    const asset = tracked?.release.assets.find((candidate) => candidate.id === assetId);
    if (!tracked || !asset) return download;
    const release = tracked;
    const counter = new ProgressCounter((bytes, done) => {
      release.bytes.set(asset.name, bytes);
      let releaseBytes = 0;
      for (const fileBytes of release.bytes.values()) releaseBytes += fileBytes;
      this.events.publish({
        type: "file_progress",
        repository: release.repository,
        tag: release.release.tag,
        file: asset.name,
        bytes,
        expected_bytes: download.size ?? asset.size,
        release_bytes: releaseBytes,
        done,
      });
    });
    // NOTE: pipeline passes a failure of the download on to the counter (the reader sees the
    // same error) and a destroyed counter on to the download (cut by the reader).
    pipeline(download.body, counter, () => {});
    return { body: counter, size: download.size };
  }
}
