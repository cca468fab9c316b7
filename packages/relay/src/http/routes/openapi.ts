import type {} from "@fastify/swagger";
import type { FastifyInstance } from "fastify";

/** `GET /openapi.json`: the document `@fastify/swagger` renders from every route's schemas. */
export function openApiRoutes(app: FastifyInstance): void {
  app.get(
    "/openapi.json",
    { config: { auth: "none" }, schema: { summary: "This OpenAPI 3 document" } },
    async () => app.swagger(),
  );
}
