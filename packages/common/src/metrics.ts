import { Counter, collectDefaultMetrics, Registry } from "prom-client";

/** A service's Prometheus metrics: its own registry, beside the process's default metrics. */
export interface ServiceMetrics {
  /** Where the service registers its own metrics (named `<prefix>_…`). */
  readonly registry: Registry;
  /** `<prefix>_http_requests_total{route,status}`: `route` is the route pattern, never the URL. */
  readonly httpRequests: Counter<"route" | "status">;
  /** The text exposition of the process's and the service's metrics (`GET /metrics`). */
  render(): Promise<string>;
  /** `Content-Type` of `render()`'s text. */
  readonly contentType: string;
}

/** `route` of an answer no route matched (404, a malformed URL): one series, not one per URL. */
export const UNMATCHED_ROUTE = "unmatched";

// NOTE: the default metrics (CPU, memory, event loop, GC) describe the process, not an app: one
// registry for the process, however many apps the tests build, each merged in at scrape time.
let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** A fresh registry for one service (`prefix`: `relay`, `delivery`) with its HTTP counter. */
export function createServiceMetrics(prefix: string): ServiceMetrics {
  const registry = new Registry();
  const httpRequests = new Counter({
    name: `${prefix}_http_requests_total`,
    help: "HTTP requests answered, by route pattern and status code.",
    labelNames: ["route", "status"] as const,
    registers: [registry],
  });
  return {
    registry,
    httpRequests,
    render: () => Registry.merge([processMetrics(), registry]).metrics(),
    contentType: Registry.PROMETHEUS_CONTENT_TYPE,
  };
}
