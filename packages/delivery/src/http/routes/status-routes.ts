import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@sinclair/typebox";
import type { StatusService } from "../../status/status-service.js";

export interface StatusRoutesOptions {
  readonly status: StatusService;
}

const NullableInt = Type.Union([Type.Integer(), Type.Null()]);

/** `GET /monitor/status`: public. */
export const statusRoutes: FastifyPluginAsyncTypebox<StatusRoutesOptions> = async (
  app,
  { status },
) => {
  app.get(
    "/monitor/status",
    {
      config: { access: "public" },
      schema: {
        summary: "System status",
        response: {
          200: Type.Object({
            version: Type.String(),
            repositories: Type.Object({ active: Type.Integer(), total: Type.Integer() }),
            releases_last_24h: Type.Integer(),
            codehost_rate_limit: Type.Object({
              limit: NullableInt,
              remaining: NullableInt,
              used: NullableInt,
              reset: NullableInt,
            }),
            services: Type.Object({ mysql: Type.Boolean(), objectstore: Type.Boolean() }),
            scheduler: Type.Object({ running: Type.Boolean(), interval_minutes: Type.Integer() }),
          }),
        },
      },
    },
    () => status.status(),
  );
};
