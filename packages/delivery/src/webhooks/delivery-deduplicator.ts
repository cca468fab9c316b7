/** How many recent delivery ids are remembered (GitHub redelivers by the same id). */
const REMEMBERED_DELIVERIES = 1_000;

/** The outcome of processing one release for a delivery. */
export interface SharedOutcome<T> {
  /** True when the release ended up processed (success or partial). */
  readonly processed: boolean;
  readonly value: T;
}

/**
 * One publication fires several deliveries (`created`, `published`, `released`), and a delivery
 * may be sent again under the same `X-GitHub-Delivery` id. Requests for a release already being
 * processed here, and repeats of a delivery already answered, wait for that one processing
 * instead of starting another. Across instances the processor's database claim does the same.
 */
export class DeliveryDeduplicator<T> {
  private readonly inFlight = new Map<string, Promise<SharedOutcome<T>>>();
  private readonly deliveries = new Map<string, Promise<SharedOutcome<T>>>();

  constructor(private readonly remembered = REMEMBERED_DELIVERIES) {}

  /**
   * Runs `work` for `release`, unless a processing of that release is in flight here or
   * `deliveryId` was already answered with a processed release: then the outcome is that
   * processing's and `joined` is true. A delivery whose processing did not end processed is
   * forgotten, so sending it again retries.
   */
  async run(
    deliveryId: string | undefined,
    release: string,
    work: () => Promise<SharedOutcome<T>>,
  ): Promise<{ outcome: SharedOutcome<T>; joined: boolean }> {
    const earlier = (deliveryId && this.deliveries.get(deliveryId)) || this.inFlight.get(release);
    if (earlier) return { outcome: await earlier, joined: true };

    const running = work();
    this.inFlight.set(release, running);
    if (deliveryId) this.remember(deliveryId, running);
    try {
      const outcome = await running;
      if (!outcome.processed && deliveryId) this.deliveries.delete(deliveryId);
      return { outcome, joined: false };
    } catch (error) {
      if (deliveryId) this.deliveries.delete(deliveryId);
      throw error;
    } finally {
      this.inFlight.delete(release);
    }
  }

  private remember(deliveryId: string, outcome: Promise<SharedOutcome<T>>): void {
    this.deliveries.set(deliveryId, outcome);
    if (this.deliveries.size > this.remembered) {
      const oldest = this.deliveries.keys().next().value;
      if (oldest !== undefined) this.deliveries.delete(oldest);
    }
  }
}
