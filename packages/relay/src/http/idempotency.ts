import { createHash, type Hash } from "node:crypto";
import { pipeline, Transform } from "node:stream";
import { type Clock, epochSeconds, type Logger, messageOf } from "@rd/common";
import type { FastifyReply, FastifyRequest, RequestPayload } from "fastify";
import { Errors } from "../errors.js";
import type { IdempotencyStore } from "../state/idempotency-repository.js";
import { withHeaders } from "./error-handler.js";

/** How long a key's first answer is replayed. */
export const IDEMPOTENCY_TTL_SECS = 24 * 60 * 60;
/** Expired keys are deleted at most this often, by the request that finds the time has come. */
const PRUNE_EVERY_SECS = 60;
/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY_SYNTAX = /^[\x20-\x7e]{1,255}$/;

/** The `Idempotency-Key` of a request and the digest of its route and raw body so far. */
const keyed = new WeakMap<FastifyRequest, { key: string; digest: Hash }>();

/**
 * `preParsing` hook of the send routes: checks the `Idempotency-Key` header (400
 * `bad_idempotency_key`) and, when there is one, hashes the raw body as it streams in to the
 * parser, so that a replay is recognised byte for byte.
 */
export async function digestIdempotentBody(
  request: FastifyRequest,
  _reply: FastifyReply,
  payload: RequestPayload,
): Promise<RequestPayload> {
  const key = request.headers["idempotency-key"];
  if (key === undefined) return payload;
  if (typeof key !== "string" || !KEY_SYNTAX.test(key)) {
    throw Errors.badIdempotencyKey(
      "Idempotency-Key must be 1 to 255 printable ASCII characters (space to ~)",
    );
  }
  const digest = createHash("sha256").update(`${request.routeOptions.url}\n`);
  keyed.set(request, { key, digest });
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      digest.update(chunk);
      done(null, chunk);
    },
  });
  return pipeline(payload, tee, () => undefined);
}

/** A send route's answer: what is sent, and kept for the replays of its key. */
export interface SendAnswer {
  readonly status: number;
  readonly body: unknown;
}

export type Idempotent = (
  request: FastifyRequest,
  reply: FastifyReply,
  run: () => Promise<SendAnswer>,
) => Promise<FastifyReply>;

/**
 * Runs a send at most once per client and `Idempotency-Key` (24 h): the first request takes the
 * key and its 200/202 is kept; a later one with the same route and body gets that answer again
 * (`Idempotent-Replayed: true`), with another body 422 `idempotency_key_reused`, and while the
 * first still runs 409 `in_progress` (`Retry-After: 1`). A refused first request (any error)
 * frees the key, so a retry after a 429 or 503 is sent. Without the header, `run` just runs.
 */
export function createIdempotency(deps: {
  store: IdempotencyStore;
  clock: Clock;
  logger: Logger;
}): Idempotent {
  const { store, logger } = deps;
  let prunedAt = 0;
  const prune = (now: number, requestId: string) => {
    if (now - prunedAt < PRUNE_EVERY_SECS) return;
    prunedAt = now;
    Promise.resolve(store.prune(now)).catch((error: unknown) => {
      logger.warn("expired idempotency keys could not be deleted", {
        error: messageOf(error),
        request_id: requestId,
      });
    });
  };

  return async (request, reply, run) => {
    const held = keyed.get(request);
    if (!held) {
      const answer = await run();
      return reply.code(answer.status).send(answer.body);
    }
    const { key } = held;
    const fingerprint = held.digest.digest("hex");
    const scope = request.client?.client_id ?? "";
    const now = epochSeconds(deps.clock);
    prune(now, request.id);
    const record = await store.claim({
      scope,
      key,
      fingerprint,
      now,
      expiresAt: now + IDEMPOTENCY_TTL_SECS,
    });
    if (record) {
      if (record.fingerprint !== fingerprint) throw Errors.idempotencyKeyReused();
      if (record.status === null || record.body === null) {
        throw withHeaders(Errors.inProgress(), { "retry-after": "1" });
      }
      return reply
        .code(record.status)
        .header("idempotent-replayed", "true")
        .send(JSON.parse(record.body));
    }
    let answer: SendAnswer;
    try {
      answer = await run();
    } catch (error) {
      await Promise.resolve(store.release(scope, key)).catch((cause: unknown) => {
        logger.error("a refused request's idempotency key could not be freed", {
          error: messageOf(cause),
          request_id: request.id,
        });
      });
      throw error;
    }
    // The message is accepted: a store failure now must not turn it into an error the sender
    // would retry; the key then stays in progress until it expires.
    await Promise.resolve(
      store.complete(scope, key, { status: answer.status, body: JSON.stringify(answer.body) }),
    ).catch((cause: unknown) => {
      logger.error("an idempotency key's answer could not be kept", {
        error: messageOf(cause),
        request_id: request.id,
      });
    });
    return reply.code(answer.status).send(answer.body);
  };
}
