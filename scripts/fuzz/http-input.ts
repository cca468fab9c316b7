import type { FuzzInput, Outcome } from "./campaign-types.js";
import { exchange, type HttpExchange, type HttpRequest, httpBytes } from "./raw-http.js";

export interface HttpInputOptions {
  /** 5xx answers the service documents for this request (e.g. 503 of a failing DNS check). */
  documented?: readonly number[];
  /** An answer slower than this counts as a stall although it came (default: only none). */
  slowMs?: number;
  /** Runs after the request; false when the fuzzer can no longer use the instance. */
  restore?: () => Promise<boolean>;
}

/** An input that is one HTTP exchange, judged by its status. */
export function httpInput(
  port: number,
  summary: string,
  request: HttpExchange,
  options: HttpInputOptions = {},
): FuzzInput {
  return {
    summary,
    reproduction: {
      kind: "http",
      pieces: request.pieces,
      ...(request.pauseMs !== undefined && { pause_ms: request.pauseMs }),
      ...(request.incomplete && { incomplete: true }),
    },
    async run(): Promise<Outcome> {
      const answer = await exchange(port, request);
      const status = answer.status;
      const lockedOut = options.restore ? !(await options.restore()) : false;
      return {
        status: String(status),
        serverError:
          typeof status === "number" && status >= 500 && !options.documented?.includes(status),
        hung: answer.hung || answer.ms > (options.slowMs ?? Number.POSITIVE_INFINITY),
        lockedOut,
        ms: answer.ms,
        detail: answer.answer,
      };
    },
  };
}

/** A well-formed request sent whole. */
export function requestInput(
  port: number,
  request: HttpRequest,
  options: HttpInputOptions = {},
): FuzzInput {
  const bytes = httpBytes(port, request);
  return httpInput(
    port,
    `${request.method} ${request.path.slice(0, 80)} (${bytes.length} B)`,
    { pieces: [bytes] },
    options,
  );
}

/** A JSON request and its answer, for the fuzzer's own setup calls (not inputs). */
export async function callJson(
  port: number,
  request: HttpRequest & { json?: unknown },
): Promise<{ status: number | string; body: unknown; headers: string }> {
  const body = request.json === undefined ? request.body : JSON.stringify(request.json);
  const answer = await exchange(port, {
    pieces: [
      httpBytes(port, {
        ...request,
        body,
        headers: {
          ...(request.json !== undefined && { "content-type": "application/json" }),
          ...request.headers,
        },
      }),
    ],
  });
  const split = answer.answer.indexOf("\r\n\r\n");
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.answer.slice(split + 4));
  } catch {
    parsed = undefined;
  }
  return { status: answer.status, body: parsed, headers: answer.answer.slice(0, split) };
}
