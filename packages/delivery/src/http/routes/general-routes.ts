import type {} from "@fastify/swagger";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { HealthProbe } from "../../status/status-service.js";

export interface GeneralRoutesOptions {
  readonly version: string;
  readonly database: HealthProbe;
}

/** `GET /`, `GET /health` and `GET /openapi.json`: public. */
export const generalRoutes: FastifyPluginAsyncTypebox<GeneralRoutesOptions> = async (
  app,
  { version, database },
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
    "/openapi.json",
    { config: { access: "public" }, schema: { summary: "This OpenAPI 3 document" } },
    async () => app.swagger(),
  );
};
