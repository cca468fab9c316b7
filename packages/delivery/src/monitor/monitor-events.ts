import { type Static, Type } from "@rd/common/typebox";
import { HistoryStatus, ProcessingTrigger } from "../releases/history-repository.js";

/** A file of a release being published, with the bytes the code host announced for it. */
const PlannedFile = Type.Object({ file: Type.String(), expected_bytes: Type.Integer() });

/**
 * What `GET /monitor/events` streams. Each event's `type` is also its SSE event name.
 * - `release_started`: a claimed release's declaration was read; `files` are the declared assets
 *   found in the release, `expected_bytes` their sum.
 * - `file_progress`: bytes of one asset read from the code host and handed to storage (a retry
 *   starts the file again from 0); `release_bytes` sums the release's files.
 * - `release_finished`: the recorded outcome (any trigger: manual, scheduler, webhook, reprocess).
 * - `scheduler_round`: how a scheduler tick of this instance ended.
 */
export const MonitorEvent = Type.Union([
  Type.Object({
    type: Type.Literal("release_started"),
    repository: Type.String(),
    tag: Type.String(),
    files: Type.Array(PlannedFile),
    expected_bytes: Type.Integer(),
  }),
  Type.Object({
    type: Type.Literal("file_progress"),
    repository: Type.String(),
    tag: Type.String(),
    file: Type.String(),
    bytes: Type.Integer(),
    expected_bytes: Type.Union([Type.Integer(), Type.Null()]),
    release_bytes: Type.Integer(),
    done: Type.Boolean(),
  }),
  Type.Object({
    type: Type.Literal("release_finished"),
    repository: Type.String(),
    tag: Type.String(),
    status: HistoryStatus,
    trigger: ProcessingTrigger,
    files_count: Type.Integer(),
    total_bytes: Type.Integer(),
    errors: Type.Array(Type.String()),
  }),
  Type.Object({
    type: Type.Literal("scheduler_round"),
    outcome: Type.String(),
    at: Type.String(),
  }),
]);
export type MonitorEvent = Static<typeof MonitorEvent>;

type Listener = (event: MonitorEvent) => void;

/** In-process publish/subscribe of monitor events: the event stream's only source. */
export class MonitorEvents {
  private readonly listeners = new Set<Listener>();

  /** Returns the unsubscribe function. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  publish(event: MonitorEvent): void {
    // A listener never breaks publishing nor another listener (each writes to its own socket).
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        this.listeners.delete(listener);
      }
    }
  }

  get subscribers(): number {
    return this.listeners.size;
  }
}
