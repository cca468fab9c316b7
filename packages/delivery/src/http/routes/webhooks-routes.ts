import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "@rd/common/typebox";
import type { CodeHostHook } from "../../codehost/code-host.js";
import type { WebhookManager } from "../../webhooks/webhook-manager.js";
import { errors } from "../schemas.js";

export interface WebhooksRoutesOptions {
  readonly webhooks: WebhookManager;
}

const RepoParams = Type.Object({ owner: Type.String(), repo: Type.String() });

const Webhook = Type.Object({
  id: Type.Integer(),
  active: Type.Boolean(),
  events: Type.Array(Type.String()),
  config: Type.Object({
    url: Type.Union([Type.String(), Type.Null()]),
    content_type: Type.Union([Type.String(), Type.Null()]),
  }),
  created_at: Type.String(),
});

function webhookBody(hook: CodeHostHook) {
  return {
    id: hook.id,
    active: hook.active,
    events: [...hook.events],
    config: { url: hook.config.url, content_type: hook.config.contentType },
    created_at: hook.createdAt,
  };
}

/** `/monitor/webhooks/{owner}/{repo}`: the code host's webhooks for a repository (API key only). */
export const webhooksRoutes: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (
  app,
  { webhooks },
) => {
  app.post(
    "/monitor/webhooks/:owner/:repo",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Create the release webhook on the code host (URL, secret, JSON, release only)",
        params: RepoParams,
        response: {
          200: Type.Object({
            success: Type.Literal(true),
            webhook: Type.Omit(Webhook, ["config"]),
          }),
          ...errors(400, 401, 403, 404, 409, 422, 502, 503),
        },
      },
    },
    async (request) => {
      const hook = await webhooks.create(request.params.owner, request.params.repo);
      const { id, active, events, created_at } = webhookBody(hook);
      return { success: true as const, webhook: { id, active, events, created_at } };
    },
  );

  app.get(
    "/monitor/webhooks/:owner/:repo",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "The repository's webhooks on the code host",
        params: RepoParams,
        response: {
          200: Type.Object({
            success: Type.Literal(true),
            repository: Type.String(),
            total: Type.Integer(),
            webhooks: Type.Array(Webhook),
          }),
          ...errors(400, 401, 403, 404, 502),
        },
      },
    },
    async (request) => {
      const { owner, repo } = request.params;
      const hooks = await webhooks.list(owner, repo);
      return {
        success: true as const,
        repository: `${owner}/${repo}`,
        total: hooks.length,
        webhooks: hooks.map(webhookBody),
      };
    },
  );

  app.delete(
    "/monitor/webhooks/:owner/:repo/:webhook_id",
    {
      config: { access: "apiKey" },
      schema: {
        summary: "Delete a webhook from the code host",
        params: Type.Object({
          owner: Type.String(),
          repo: Type.String(),
          webhook_id: Type.Integer({ minimum: 1 }),
        }),
        response: {
          200: Type.Object({ success: Type.Literal(true), message: Type.String() }),
          ...errors(400, 401, 403, 404, 502),
        },
      },
    },
    async (request) => {
      const { owner, repo, webhook_id: id } = request.params;
      await webhooks.remove(owner, repo, id);
      return { success: true as const, message: `Webhook ${id} deleted from ${owner}/${repo}` };
    },
  );
};
