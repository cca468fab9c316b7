import type {} from "@fastify/swagger";
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type Readiness, ReadinessReportSchema } from "@rd/common";
import { Type } from "@rd/common/typebox";
import type { HealthProbe } from "../../status/status-service.js";

export interface GeneralRoutesOptions {
  readonly version: string;
  readonly database: HealthProbe;
  readonly readiness: Readiness;
}

/**
 * Whether a request asks for a page rather than JSON: `text/html` named in `Accept` and not
 * ranked below `application/json` (browsers send `text/html,…,*\/*;q=0.8`, API clients
 * `application/json` or `*\/*`).
 */
export function prefersHtml(accept: string | undefined): boolean {
  const quality = (type: string) => {
    for (const part of (accept ?? "").toLowerCase().split(",")) {
      const [media, ...params] = part.split(";").map((piece) => piece.trim());
      if (media !== type) continue;
      const q = params.find((param) => param.startsWith("q="));
      return q ? Number(q.slice(2)) || 0 : 1;
    }
    return -1;
  };
  const html = quality("text/html");
  return html > 0 && html >= quality("application/json");
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
        summary: "Welcome message and version; browsers (Accept: text/html) go to the dashboard",
        response: {
          200: Type.Object({ message: Type.String(), version: Type.String() }),
          302: { description: "To /dashboard/, for a request that prefers text/html" },
        },
      },
    },
    async (request, reply) => {
      if (prefersHtml(request.headers.accept)) return reply.redirect("/dashboard/");
      return { message: "Release-delivery service", version };
    },
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
