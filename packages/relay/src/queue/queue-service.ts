import type { QueueEntry, QueueRepository, QueueState } from "../state/queue-repository.js";

/** The delivery states and entry shape `GET /queue` answers with (the repository's rows). */
export { QUEUE_STATES, type QueueEntry, type QueueState } from "../state/queue-repository.js";

import type { QueueWorker, TickReport } from "./queue-worker.js";

/** `GET /queue` without `limite` returns this many entries. */
export const QUEUE_LIST_DEFAULT_LIMIT = 100;
/** `limite` ceiling (specification, Limits); a larger value is taken as this one. */
export const QUEUE_LIST_MAX_LIMIT = 500;

/** `GET /queue` query, as the wire names it. */
export interface QueueQuery {
  estado?: QueueState;
  rcpt?: string;
  message_id?: string;
  client_id?: string;
  limite?: number;
}

/** The queue as the admin endpoints see it: drain what is due, and inspect deliveries. */
export interface QueueService {
  tick(): Promise<TickReport>;
  /** Filters combine with AND; newest first; at most `limite` (default 100, ceiling 500). */
  list(query: QueueQuery): QueueEntry[];
}

export function createQueueService(deps: {
  repository: QueueRepository;
  worker: QueueWorker;
}): QueueService {
  return {
    tick: () => deps.worker.tick(),
    list({ limite, ...filters }) {
      const limit = Math.min(limite ?? QUEUE_LIST_DEFAULT_LIMIT, QUEUE_LIST_MAX_LIMIT);
      return deps.repository.list({ ...filters, limit });
    },
  };
}
