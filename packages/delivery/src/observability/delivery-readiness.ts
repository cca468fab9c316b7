import { createReadiness, type Readiness } from "@rd/common";
import type { HealthProbe } from "../status/status-service.js";

/**
 * `GET /ready`: the database answers, the storage is usable (the local folder writable, and the
 * object store answering when one is configured), and the service is not shutting down.
 */
export function createDeliveryReadiness(
  database: HealthProbe,
  storage: { readonly local: HealthProbe; readonly objectstore: HealthProbe | null },
): Readiness {
  return createReadiness({
    database: () => database.isHealthy(),
    storage: async () =>
      (await storage.local.isHealthy()) && (storage.objectstore?.isHealthy() ?? true),
  });
}
