import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { ServiceMetrics } from "@rd/common";
import { Type } from "@rd/common/typebox";

export interface MetricsRoutesOptions {
  readonly metrics: ServiceMetrics;
}

/** `GET /metrics`: Prometheus text format, behind the API key (open when none is configured). */
export const metricsRoutes: FastifyPluginAsyncTypebox<MetricsRoutesOptions> = async (
  app,
  { metrics },
) => {
  app.get(
    "/metrics",
    {
      config: { access: "metrics" },
      schema: {
        summary:
          "Prometheus metrics (text format): the API key as X-API-Key or Authorization: Bearer",
        response: {
          200: {
            description: "Prometheus text exposition format 0.0.4",
            content: { "text/plain": { schema: { type: "string" } } },
          },
          401: Type.Object({ error: Type.String() }),
        },
      },
    },
    async (_request, reply) => reply.type(metrics.contentType).send(await metrics.render()),
  );
};
