import swaggerUi from "@fastify/swagger-ui";
import { docsUiOptions } from "@rd/common";
import type { FastifyPluginAsync } from "fastify";
import { setScopeAccess } from "../access-control.js";

/**
 * `GET /docs`: Swagger UI over this service's OpenAPI document, its assets served from the
 * package (no CDN). Public like `/openapi.json`; the plugin's routes declare no access level,
 * so this scope gives them theirs.
 */
export const docsRoutes: FastifyPluginAsync = async (app) => {
  setScopeAccess(app, "public");
  await app.register(swaggerUi, docsUiOptions());
};
