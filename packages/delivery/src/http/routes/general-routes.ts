import type {} from "@fastify/swagger";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type Readiness, ReadinessReportSchema } from "@rd/common";
import { Type } from "@sinclair/typebox";
import type { HealthProbe } from "../../status/status-service.js";

export interface GeneralRoutesOptions {
  readonly version: string;
  readonly database: HealthProbe;
  readonly readiness: Readiness;
}

/** `GET /`, `GET /health`, `GET /ready` and `GET /openapi.json`: public. */
export const generalRoutes: FastifyPluginAsyncTypebox<GeneralRoutesOptions> = async (
  app,
  { version, database, readiness },
) => {
  app.get(
    "/",
    {
      config: { access: "public" },
      schema: {
        summary: "Welcome message and version",
        response: { 200: Type.Object({ message: Type.String(), version: Type.String() }) },
      },
    },
    async () => ({ message: "Release-delivery service", version }),
  );

  app.get(
    "/health",
    {
      config: { access: "public" },
      schema: {
        summary: "Liveness: 200 when the database answers, 503 otherwise",
        response: {
          200: Type.Object({ status: Type.Literal("ok") }),
          503: Type.Object({
            status: Type.Literal("degraded"),
            services: Type.Object({ database: Type.Boolean() }),
          }),
        },
      },
    },
    async (_request, reply) => {
      if (await database.isHealthy()) return { status: "ok" as const };
      return reply.code(503).send({ status: "degraded", services: { database: false } });
    },
  );

  app.get(
    "/ready",
    {
      config: { access: "public" },
      schema: {
        summary:
          "Readiness: 200 when the database answers, the storage is usable and the service is not shutting down; 503 naming what failed",
        response: { 200: ReadinessReportSchema, 503: ReadinessReportSchema },
      },
    },
    async (_request, reply) => {
      const report = await readiness.check();
      return reply.code(report.status === "ready" ? 200 : 503).send(report);
    },
  );

  app.get(
    "/openapi.json",
    { config: { access: "public" }, schema: { summary: "This OpenAPI 3 document" } },
    async () => app.swagger(),
  );
};
