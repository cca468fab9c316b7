import { Type } from "@sinclair/typebox";
import { QUEUE_STATES } from "../../queue/queue-service.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

const Estado = Type.Union(
  QUEUE_STATES.map((state) => Type.Literal(state)),
  { description: "queued | sending | sent | failed" },
);

const QueueEntry = Type.Object({
  pk: Type.Integer(),
  message_id: Type.String({ description: "angle-bracketed Message-ID" }),
  client_id: Type.Union([Type.String(), Type.Null()], {
    description: "null for /send on an open instance",
  }),
  envelope_from: Type.String(),
  rcpt: Type.String(),
  estado: Estado,
  attempts: Type.Integer(),
  next_attempt_at: Type.Integer({ description: "epoch seconds" }),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.Integer({ description: "epoch seconds" }),
});

const TickReport = Type.Object({
  ok: Type.Boolean(),
  ocupado: Type.Boolean({ description: "another tick was running; this one did nothing" }),
  tentados: Type.Integer(),
  entregues: Type.Integer(),
  falhos: Type.Integer(),
  reagendados: Type.Integer(),
});

const QueueQuery = Type.Object(
  {
    estado: Type.Optional(Estado),
    rcpt: Type.Optional(
      Type.String({ minLength: 1, description: "partial match on the recipient" }),
    ),
    message_id: Type.Optional(
      Type.String({ minLength: 1, description: "every delivery of a message" }),
    ),
    client_id: Type.Optional(Type.String({ minLength: 1 })),
    limite: Type.Optional(
      Type.Integer({ minimum: 1, description: "default 100; above 500 is taken as 500" }),
    ),
  },
  { additionalProperties: false },
);

/** `POST /queue/tick` and `GET /queue` (admin). */
export function queueRoutes(app: RelayApp, { queue }: AppDeps): void {
  app.post(
    "/queue/tick",
    {
      schema: {
        summary: "Drain the due deliveries (reentrant: a tick during a tick answers ocupado)",
        response: responses({ 200: TickReport }, [401]),
      },
    },
    () => queue.tick(),
  );

  app.get(
    "/queue",
    {
      schema: {
        summary: "Query deliveries (filters combine with AND; newest first)",
        querystring: QueueQuery,
        response: responses({ 200: Type.Object({ queue: Type.Array(QueueEntry) }) }, [400, 401]),
      },
    },
    async (request) => ({ queue: queue.list(request.query) }),
  );
}
