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

/** @param flush takes a batch, returns one result per item in the same order. */
export function createGroupCommit<T, R>(flush: (items: T[]) => Promise<R[]>): GroupCommit<T, R> {
  let next: Array<Waiting<T, R>> = [];
  let flushing = false;

  async function drain(): Promise<void> {
    flushing = true;
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
      if (!flushing) void drain();
    });
}
