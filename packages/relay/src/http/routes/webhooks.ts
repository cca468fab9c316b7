import { Type } from "@rd/common/typebox";
import {
  CreatedWebhookSchema,
  NewWebhookSchema,
  WebhookViewSchema,
} from "../../webhooks/webhook-service.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { OkBody, responses } from "../schemas.js";

const Params = Type.Object({ id: Type.String({ maxLength: 64 }) });

/** `POST/GET/DELETE /webhooks` (admin): delivery-event endpoints. */
export function webhookRoutes(app: RelayApp, { webhooks }: AppDeps): void {
  app.post(
    "/webhooks",
    {
      schema: {
        summary: "Register an endpoint for delivery events; its secret is returned only here",
        body: NewWebhookSchema,
        response: responses({ 201: CreatedWebhookSchema }, [400, 401]),
      },
    },
    async (request, reply) => reply.code(201).send(await webhooks.create(request.body)),
  );

  app.get(
    "/webhooks",
    {
      schema: {
        summary: "List endpoints with their pending events and recent attempts (never secrets)",
        response: responses(
          { 200: Type.Object({ webhooks: Type.Array(WebhookViewSchema) }) },
          [401],
        ),
      },
    },
    async () => ({ webhooks: await webhooks.list() }),
  );

  app.get(
    "/webhooks/:id",
    {
      schema: {
        summary: "One endpoint with its pending events and recent attempts",
        params: Params,
        response: responses({ 200: WebhookViewSchema }, [401, 404]),
      },
    },
    async (request) => webhooks.get(request.params.id),
  );

  app.delete(
    "/webhooks/:id",
    {
      schema: {
        summary: "Remove an endpoint; its events not yet delivered are dropped",
        params: Params,
        response: responses({ 200: OkBody }, [401, 404]),
      },
    },
    async (request) => {
      await webhooks.remove(request.params.id);
      return { ok: true as const };
    },
  );
}
