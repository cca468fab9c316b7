import { type Static, Type } from "./typebox.js";

/** One readiness condition: true when it holds. A probe that throws or hangs counts as false. */
export type ReadinessProbe = () => Promise<boolean>;

/** How long `GET /ready` waits for one probe before counting it as failed. */
export const PROBE_TIMEOUT_MS = 2_000;

/** The `GET /ready` answer of both services (200 when ready, 503 otherwise). */
export const ReadinessReportSchema = Type.Object({
  status: Type.Union([Type.Literal("ready"), Type.Literal("not_ready")]),
  checks: Type.Object(
    {
      database: Type.Boolean({ description: "the database answers a query" }),
      storage: Type.Boolean({ description: "the service's files (or object store) are usable" }),
      accepting: Type.Boolean({ description: "false once the service is shutting down" }),
    },
    { description: "each condition: true when it holds" },
  ),
});
export type ReadinessReport = Static<typeof ReadinessReportSchema>;

/** Readiness (`GET /ready`), apart from liveness (`GET /health`). */
export interface Readiness {
  check(): Promise<ReadinessReport>;
  /** From now on the service is shutting down: not ready, whatever the probes say. */
  markStopping(): void;
}

async function holds(probe: ReadinessProbe, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([probe().catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Readiness from a database probe and a storage probe, asked concurrently at each check. */
export function createReadiness(
  probes: { readonly database: ReadinessProbe; readonly storage: ReadinessProbe },
  timeoutMs = PROBE_TIMEOUT_MS,
): Readiness {
  let accepting = true;
  return {
    async check() {
      const [database, storage] = await Promise.all([
        holds(probes.database, timeoutMs),
        holds(probes.storage, timeoutMs),
      ]);
      const checks = { database, storage, accepting };
      const ready = database && storage && accepting;
      return { status: ready ? "ready" : "not_ready", checks };
    },
    markStopping() {
      accepting = false;
    },
  };
}
