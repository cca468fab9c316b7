import { Type } from "@rd/common/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Ledger } from "../../ledger/ledger.js";
import { DeliveryResultSchema } from "../../outbound/outbound.js";
import { SendFieldsSchema, SendRawBodySchema } from "../../submission/send-request.js";
import type { SubmissionOutcome } from "../../submission/submission-service.js";
import { messageIdOfRefusal } from "../../submission/submission-service.js";
import type { AppDeps, RelayApp } from "../app-deps.js";
import { toAppError } from "../error-handler.js";
import { createIdempotency, digestIdempotentBody, type SendAnswer } from "../idempotency.js";
import { asciiBytesOf } from "../long-json-strings.js";
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
  {
    200: { ...SendResult, description: "sent (synchronous mode)" },
    202: { ...SendResult, description: "queued (asynchronous mode)" },
  },
  [400, 401, 409, 413, 422, 500, 503],
);

/** The optional `Idempotency-Key` request header (README, "Idempotency keys"). */
const IDEMPOTENCY_HEADERS = Type.Object({
  "idempotency-key": Type.Optional(
    Type.String({
      description:
        "1 to 255 printable ASCII characters: the same client, key, route and body within 24 h get the first 200/202 again, with the response header Idempotent-Replayed: true, and nothing is sent twice; another body is 422 idempotency_key_reused, a request while the first runs 409 in_progress",
    }),
  ),
});

/** `POST /send` and `POST /send-raw`: schemas, body limits and a call into the submission service. */
export function sendRoutes(app: RelayApp, deps: AppDeps): void {
  const { submission, ledger } = deps;
  const onError = recordRefusal(ledger);
  const idempotent = createIdempotency({
    store: deps.idempotency,
    clock: deps.clock,
    logger: deps.logging.forTarget("relay::http"),
  });

  app.post(
    "/send",
    {
      bodyLimit: SEND_BODY_LIMIT,
      config: { auth: "client-or-open" },
      onError,
      preParsing: digestIdempotentBody,
      schema: {
        summary: "Send a message built from fields (client Basic; open instance: no credential)",
        headers: IDEMPOTENCY_HEADERS,
        body: SendFieldsSchema,
        response: SEND_RESPONSES,
      },
    },
    (request, reply) =>
      idempotent(request, reply, async () =>
        answer(
          await submission.submitFields(request.client, request.body, { requestId: request.id }),
        ),
      ),
  );

  app.post(
    "/send-raw",
    {
      bodyLimit: SEND_RAW_BODY_LIMIT,
      config: { auth: "client", octetsOnly: "raw" },
      onError,
      preParsing: digestIdempotentBody,
      schema: {
        summary: "Send a ready RFC 5322 message as given (client Basic)",
        headers: IDEMPOTENCY_HEADERS,
        body: SendRawBodySchema,
        response: SEND_RESPONSES,
      },
    },
    (request, reply) =>
      idempotent(request, reply, async () => {
        // The guard authenticated the client on this `client` route.
        const client = request.client;
        if (!client) throw new Error("client route reached without a client");
        // A long ASCII message's octets as the body parser decoded them (its UTF-8 already); the
        // body holds a stand-in for them (`octetsOnly`).
        const raw = asciiBytesOf(request.body, "raw") ?? request.body.raw;
        return answer(
          await submission.submitRaw(client, { ...request.body, raw }, { requestId: request.id }),
        );
      }),
  );
}

function answer(outcome: SubmissionOutcome): SendAnswer {
  return {
    status: outcome.mode === "async" ? 202 : 200,
    body: { message_id: outcome.messageId, results: outcome.results },
  };
}

/**
 * Every refusal of a send endpoint (credentials, body size, validation, authorization, quota)
 * becomes one `rejected` ledger event, with the message_id when the send had one.
 */
function recordRefusal(ledger: Ledger) {
  return async (request: FastifyRequest, _reply: FastifyReply, error: Error) => {
    const { code, status } = toAppError(error, request);
    ledger.emit(
      {
        event: "rejected",
        message_id: messageIdOfRefusal(error),
        reason: code,
        http_status: status,
      },
      request.id,
    );
  };
}
