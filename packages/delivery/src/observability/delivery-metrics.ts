import { createServiceMetrics, type ServiceMetrics } from "@rd/common";
import { Counter, Gauge, Histogram } from "prom-client";
import type { ProcessedRelease } from "../releases/release-processor.js";
import type { TickOutcome } from "../scheduler/release-scheduler.js";

/** Upper bounds of `delivery_publish_duration_seconds`: a small release to a large one. */
const PUBLISH_DURATION_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/** The delivery service's Prometheus metrics (`GET /metrics`). */
export interface DeliveryMetrics extends ServiceMetrics {
  /** The release processor's `onProcessed`. */
  releaseProcessed(release: ProcessedRelease): void;
  /** The scheduler's `onTick`. */
  schedulerTicked(outcome: TickOutcome): void;
}

export interface DeliveryMetricsSources {
  /** The code host's remaining core requests (cached by the status), null when unknown. */
  rateLimitRemaining(): Promise<number | null>;
}

export function createDeliveryMetrics(sources: DeliveryMetricsSources): DeliveryMetrics {
  const service = createServiceMetrics("delivery");
  const registers = [service.registry];
  const processed = new Counter({
    name: "delivery_releases_processed_total",
    help: "Releases processed and recorded, by status: success, partial or failed.",
    labelNames: ["status"] as const,
    registers,
  });
  const published = new Counter({
    name: "delivery_published_bytes_total",
    help: "Bytes of release files published, by storage provider (objectstore or local).",
    labelNames: ["provider"] as const,
    registers,
  });
  const duration = new Histogram({
    name: "delivery_publish_duration_seconds",
    help: "Time to process one release, from its claim to its history record.",
    buckets: PUBLISH_DURATION_BUCKETS,
    registers,
  });
  const rounds = new Counter({
    name: "delivery_scheduler_rounds_total",
    help: "Scheduler ticks on this instance, by outcome: ran, still_running (skipped), taken_elsewhere, failed.",
    labelNames: ["outcome"] as const,
    registers,
  });
  // The label values known in advance start at 0, so that `rate()` sees their first event.
  for (const status of ["success", "partial", "failed"]) processed.inc({ status }, 0);
  for (const provider of ["objectstore", "local"]) published.inc({ provider }, 0);
  for (const outcome of ["ran", "still_running", "taken_elsewhere", "failed"]) {
    rounds.inc({ outcome }, 0);
  }
  new Gauge({
    name: "delivery_codehost_rate_limit_remaining",
    help: "Requests left in the code host's core rate limit (read at most every 30 s; absent while unknown).",
    // A label lets the sample be left out while the limit is unknown: an unlabelled gauge
    // would read 0 ("exhausted") or NaN, which alerts on `< N` silently skip.
    labelNames: ["resource"] as const,
    registers,
    async collect() {
      this.reset();
      const remaining = await sources.rateLimitRemaining();
      if (remaining !== null) this.set({ resource: "core" }, remaining);
    },
  });

  return {
    ...service,
    releaseProcessed({ status, bytes, provider, seconds }) {
      processed.inc({ status });
      if (provider !== undefined) published.inc({ provider }, bytes);
      duration.observe(seconds);
    },
    schedulerTicked: (outcome) => rounds.inc({ outcome }),
  };
}
