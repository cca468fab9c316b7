import { Type } from "@sinclair/typebox";
import { VERSION } from "../../version.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

export function healthRoutes(app: RelayApp, deps: AppDeps): void {
  app.get(
    "/health",
    {
      config: { auth: "none" },
      schema: {
        summary: "Health check (no credential; allowlist and throttle apply)",
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
}
