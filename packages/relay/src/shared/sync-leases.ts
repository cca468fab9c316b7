import { type Clock, epochSeconds, type Logger, messageOf } from "@rd/common";
import type { SharedDb } from "./shared-database.js";

/**
 * The leases of this instance's synchronous deliveries. Their rows are inserted `sending` with
 * a lease and no body (it lives only in the request): while the instance lives it renews the
 * lease of every such row it has not finished, however long the delivery's retries take; once
 * it dies the lease lapses and whichever instance claims the row next ends it `failed` (the
 * queue's attempt, `SYNC_DELIVERY_INTERRUPTED`), as the embedded relay's boot recovery does.
 */
export interface SyncLeases {
  /** Renews the leases of `pks` from now on, until `release`. */
  hold(pks: readonly number[]): void;
  release(pk: number): void;
}

export function createSyncLeases(deps: {
  db: SharedDb;
  leaseSecs: () => number;
  clock: Clock;
  logger: Logger;
}): SyncLeases {
  const held = new Set<number>();
  let timer: NodeJS.Timeout | undefined;

  async function renew(): Promise<void> {
    if (held.size === 0) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    const now = epochSeconds(deps.clock);
    await deps.db
      .updateTable("relay_queue")
      .set({ lease_until: now + deps.leaseSecs() })
      .where("pk", "in", [...held])
      .where("estado", "=", "sending")
      .execute()
      .catch((error: unknown) => {
        deps.logger.warn("synchronous deliveries' leases not renewed", {
          error: messageOf(error),
        });
      });
  }

  return {
    hold(pks) {
      for (const pk of pks) held.add(pk);
      // Three renewals per lease: one lost to a slow database still leaves the lease standing.
      timer ??= setInterval(() => void renew(), (deps.leaseSecs() * 1000) / 3).unref();
    },
    release(pk) {
      held.delete(pk);
    },
  };
}
