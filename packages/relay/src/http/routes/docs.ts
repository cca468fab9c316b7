import swaggerUi from "@fastify/swagger-ui";
import { docsUiOptions } from "@rd/common";
import type { RelayApp } from "../app-deps.js";

/**
 * `GET /docs`: Swagger UI over this relay's OpenAPI document, its assets served from the
 * package (no CDN). Public like `/openapi.json` and not counted by the throttle; the allowlist
 * applies. The plugin's routes declare nothing, so this scope gives them their access.
 */
export function docsRoutes(app: RelayApp): void {
  void app.register(async (scope) => {
    scope.addHook("onRoute", (route) => {
      route.config = { ...route.config, auth: "none", throttle: false };
    });
    await scope.register(swaggerUi, docsUiOptions());
  });
}
