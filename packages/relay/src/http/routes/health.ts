import { ReadinessReportSchema } from "@rd/common";
import { Type } from "@rd/common/typebox";
import { VERSION } from "../../version.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

/** `GET /health` (liveness) and `GET /ready` (readiness): no credential, not throttled. */
export function healthRoutes(app: RelayApp, deps: AppDeps): void {
  app.get(
    "/health",
    {
      config: { auth: "none", throttle: false },
      schema: {
        summary: "Liveness (no credential; the allowlist applies, the throttle does not count it)",
        response: responses({
          200: Type.Object({
            status: Type.Literal("ok"),
            version: Type.String(),
            mode: Type.Union([Type.Literal("sync"), Type.Literal("async")]),
          }),
        }),
      },
    },
    async () => ({
      status: "ok" as const,
      version: VERSION,
      mode: deps.env.asyncMode ? ("async" as const) : ("sync" as const),
    }),
  );

  app.get(
    "/ready",
    {
      config: { auth: "none", throttle: false },
      schema: {
        summary:
          "Readiness: 200 when the state database answers, its folder (RELAY_DB, with the spool) is writable and the relay is not shutting down; 503 naming what failed",
        response: responses({ 200: ReadinessReportSchema, 503: ReadinessReportSchema }),
      },
    },
    async (_request, reply) => {
      const report = await deps.readiness.check();
      return reply.code(report.status === "ready" ? 200 : 503).send(report);
    },
  );
}
