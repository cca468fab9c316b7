import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type StatusService, SystemStatus } from "../../status/status-service.js";

export interface StatusRoutesOptions {
  readonly status: StatusService;
}

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
          200: SystemStatus,
        },
      },
    },
    () => status.status(),
  );
};
