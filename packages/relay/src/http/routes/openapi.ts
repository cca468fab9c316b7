import type { RelayApp, RouteDeps } from "../app.js";

export function openApiRoutes(app: RelayApp, deps: RouteDeps): void {
  app.get(
    "/openapi.json",
    { config: { auth: "none" }, schema: { summary: "This OpenAPI 3 document" } },
    async () => deps.openApi.document(),
  );
}
