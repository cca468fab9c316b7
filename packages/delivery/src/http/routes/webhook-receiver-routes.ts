import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { WebhookAnswer, type WebhookReceiver } from "../../webhooks/webhook-receiver.js";
import { SIGNATURE_HEADER } from "../../webhooks/webhook-signature.js";
import { errors } from "../schemas.js";

export interface WebhookReceiverRoutesOptions {
  readonly receiver: WebhookReceiver;
}

/**
 * Largest delivery accepted. GitHub caps payloads at 25 MB, but a release event (release notes
 * of at most 125,000 characters plus the asset list) stays far below this, and an
 * unauthenticated body is held in memory until its signature is checked.
 */
const WEBHOOK_BODY_LIMIT_BYTES = 5 * 1024 * 1024;

/** `POST /webhook/codehost`: public, authenticated by the delivery's HMAC signature. */
export const webhookReceiverRoutes: FastifyPluginAsyncTypebox<
  WebhookReceiverRoutesOptions
> = async (app, { receiver }) => {
  // NOTE: the signature covers the exact bytes sent, so this scope keeps every body as the raw
  // Buffer; re-serialising parsed JSON would change them. Parsing happens after verification.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "buffer" }, (_request, body, done) => done(null, body));

  app.post(
    "/webhook/codehost",
    {
      config: { access: "public" },
      bodyLimit: WEBHOOK_BODY_LIMIT_BYTES,
      schema: {
        summary: "Receiver of the code host's release events (X-Hub-Signature-256 required)",
        response: { 200: WebhookAnswer, ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      const header = (name: string) => {
        const value = request.headers[name];
        return typeof value === "string" ? value : undefined;
      };
      return receiver.receive({
        event: header("x-github-event"),
        deliveryId: header("x-github-delivery"),
        signature: request.headers[SIGNATURE_HEADER],
        body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
    },
  );
};
