import { Type } from "@rd/common/typebox";
import { QueueEntrySchema, QueueQuerySchema } from "../../queue/queue-service.js";
import { TickReportSchema } from "../../queue/tick-report.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

/** `POST /queue/tick` and `GET /queue` (admin). */
export function queueRoutes(app: RelayApp, { queue }: AppDeps): void {
  app.post(
    "/queue/tick",
    {
      schema: {
        summary: "Drain the due deliveries (reentrant: a tick during a tick answers ocupado)",
        response: responses({ 200: TickReportSchema }, [401]),
      },
    },
    (request) => queue.tick(request.id),
  );

  app.get(
    "/queue",
    {
      schema: {
        summary: "Query deliveries (filters combine with AND; newest first)",
        querystring: QueueQuerySchema,
        response: responses(
          { 200: Type.Object({ queue: Type.Array(QueueEntrySchema) }) },
          [400, 401],
        ),
      },
    },
    async (request) => ({ queue: await queue.list(request.query) }),
  );
}
