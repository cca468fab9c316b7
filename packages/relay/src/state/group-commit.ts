/**
 * Group commit: the items that arrive while a flush runs wait together and are flushed by the
 * next one, so requests arriving together share one transaction and one sync instead of paying
 * for their own. Each caller resolves only once the flush that carried its item is done (its
 * data durable), with its own result; a failed flush rejects every item it carried.
 */
export type GroupCommit<T, R> = (item: T) => Promise<R>;

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * @param flush takes a batch, returns one result per item in the same order.
 * @param options.gatherMs how long the first item to reach an idle group commit waits for others
 *   before its flush (default 0: at once). For a database across the network, where most of a
 *   flush's cost is per batch, not per item (its transaction, its commit), a short wait makes
 *   the batches under load larger; locally it would only add latency. `"turn"`: until the end of
 *   the event loop's current turn (`setImmediate`), for a flush that runs synchronously: the
 *   items of the I/O callbacks that ran together share it, at no added wait.
 */
export function createGroupCommit<T, R>(
  flush: (items: T[]) => Promise<R[]>,
  options: { gatherMs?: number | "turn" } = {},
): GroupCommit<T, R> {
  const gatherMs = options.gatherMs ?? 0;
  let next: Array<Waiting<T, R>> = [];
  // True from the first item's arrival (its gathering wait included) until the queue is empty.
  let flushing = false;

  async function drain(): Promise<void> {
    while (next.length > 0) {
      const batch = next;
      next = [];
      try {
        const results = await flush(batch.map((waiting) => waiting.item));
        for (const [index, waiting] of batch.entries()) waiting.resolve(results[index] as R);
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    flushing = false;
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      next.push({ item, resolve, reject });
      if (flushing) return;
      flushing = true;
      if (gatherMs === "turn") setImmediate(() => void drain());
      else if (gatherMs > 0) setTimeout(() => void drain(), gatherMs);
      else void drain();
    });
}
