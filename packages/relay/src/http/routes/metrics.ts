import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

/** `GET /metrics`: Prometheus text format, behind the admin token (or open, as admin routes are). */
export function metricsRoutes(app: RelayApp, deps: AppDeps): void {
  app.get(
    "/metrics",
    {
      config: { auth: "metrics" },
      schema: {
        summary:
          "Prometheus metrics (text format): the admin token as X-Auth-Token or Authorization: Bearer",
        response: {
          ...responses({}, [401]),
          200: {
            description: "Prometheus text exposition format 0.0.4",
            content: { "text/plain": { schema: { type: "string" } } },
          },
        },
      },
    },
    async (_request, reply) =>
      reply.type(deps.metrics.contentType).send(await deps.metrics.render()),
  );
}
