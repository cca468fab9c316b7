import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Ledger } from "../../ledger/ledger.js";
import { DeliveryResultSchema } from "../../outbound/outbound.js";
import { SendFieldsSchema, SendRawBodySchema } from "../../submission/send-request.js";
import type { SubmissionOutcome } from "../../submission/submission-service.js";
import { messageIdOfRefusal } from "../../submission/submission-service.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { toAppError } from "../error-handler.js";
import { responses } from "../schemas.js";

/** Largest `/send` body (specification, Limits): refused with 413 while it streams in. */
export const SEND_BODY_LIMIT = 5 * 1024 * 1024;
/** Largest `/send-raw` body (specification, Limits). */
export const SEND_RAW_BODY_LIMIT = 8 * 1024 * 1024;
const SendResult = Type.Object({
  message_id: Type.String({ description: "the Message-ID, angle-bracketed" }),
  results: Type.Array(DeliveryResultSchema),
});

const SEND_RESPONSES = responses(
  { 200: SendResult, 202: { ...SendResult, description: "queued (asynchronous mode)" } },
  [400, 401, 413, 500, 503],
);

/** `POST /send` and `POST /send-raw`: schemas, body limits and a call into the submission service. */
export function sendRoutes(app: RelayApp, { submission, ledger }: AppDeps): void {
  const onError = recordRefusal(ledger);

  app.post(
    "/send",
    {
      bodyLimit: SEND_BODY_LIMIT,
      config: { auth: "client-or-open" },
      onError,
      schema: {
        summary: "Send a message built from fields (client Basic; open instance: no credential)",
        body: SendFieldsSchema,
        response: SEND_RESPONSES,
      },
    },
    async (request, reply) =>
      answer(reply, await submission.submitFields(request.client, request.body)),
  );

  app.post(
    "/send-raw",
    {
      bodyLimit: SEND_RAW_BODY_LIMIT,
      config: { auth: "client" },
      onError,
      schema: {
        summary: "Send a ready RFC 5322 message as given (client Basic)",
        body: SendRawBodySchema,
        response: SEND_RESPONSES,
      },
    },
    async (request, reply) => {
      // The guard authenticated the client on this `client` route.
      const client = request.client;
      if (!client) throw new Error("client route reached without a client");
      return answer(reply, await submission.submitRaw(client, request.body));
    },
  );
}

function answer(reply: FastifyReply, outcome: SubmissionOutcome) {
  return reply
    .code(outcome.mode === "async" ? 202 : 200)
    .send({ message_id: outcome.messageId, results: outcome.results });
}

/**
 * Every refusal of a send endpoint (credentials, body size, validation, authorization, quota)
 * becomes one `rejected` ledger event, with the message_id when the send had one.
 */
function recordRefusal(ledger: Ledger) {
  return async (request: FastifyRequest, _reply: FastifyReply, error: Error) => {
    const { code, status } = toAppError(error, request);
    ledger.emit({
      event: "rejected",
      message_id: messageIdOfRefusal(error),
      reason: code,
      http_status: status,
    });
  };
}
