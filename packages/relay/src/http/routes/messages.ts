import { MessageParamsSchema, MessageStatusSchema } from "../../queue/message-status.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { responses } from "../schemas.js";

/** `GET /messages/{message_id}`: a client sees its own messages, the admin token every one. */
export function messageRoutes(app: RelayApp, { queue }: AppDeps): void {
  app.get(
    "/messages/:message_id",
    {
      config: { auth: "client-or-admin" },
      schema: {
        summary: "A message's recipients and their delivery, with its tags and metadata",
        params: MessageParamsSchema,
        response: responses({ 200: MessageStatusSchema }, [401, 404]),
      },
    },
    (request) =>
      queue.message(
        request.params.message_id,
        request.client && { clientId: request.client.client_id },
      ),
  );
}
