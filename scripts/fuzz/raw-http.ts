import { connect } from "node:net";

// HTTP at the byte level: every fuzz request is built as the exact bytes sent (which is also its
// reproduction) and exchanged over a fresh loopback socket, so malformed framing reaches the
// server as written and no client library repairs it.

/** How long a request may go unanswered before the fuzzer calls it hung. */
export const REQUEST_BOUND_MS = 10_000;
/** Most of an answer kept for the report (statuses and error bodies fit). */
const KEPT_ANSWER_BYTES = 4096;

export interface HttpRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}

/** A well-formed request with `Content-Length` and `Connection: close`. */
export function httpBytes(port: number, request: HttpRequest): Buffer {
  const body =
    request.body === undefined
      ? undefined
      : Buffer.isBuffer(request.body)
        ? request.body
        : Buffer.from(request.body, "utf8");
  const headers: Record<string, string> = {
    host: `127.0.0.1:${port}`,
    connection: "close",
    ...(body !== undefined && { "content-length": String(body.length) }),
    ...request.headers,
  };
  const head = `${request.method} ${request.path} HTTP/1.1\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n`;
  return body === undefined
    ? Buffer.from(head, "latin1")
    : Buffer.concat([Buffer.from(head, "latin1"), body]);
}

/** Bytes sent as written: either at once, or in pieces with pauses (a slow client). */
export interface HttpExchange {
  /** The request bytes, in pieces written one after the other. */
  pieces: Buffer[];
  /** Pause before each piece after the first (a slow client), in milliseconds. */
  pauseMs?: number;
  /** The request is deliberately incomplete: a server waiting for the rest is not hung. */
  incomplete?: boolean;
  /** How long to wait for an answer (defaults to `REQUEST_BOUND_MS`). */
  boundMs?: number;
}

export interface HttpOutcome {
  /** The status code of the first answer, or what happened instead. */
  status: number | "no-answer" | "closed" | "reset" | "refused";
  ms: number;
  /** The first bytes of the answer, for the report. */
  answer: string;
  /** Nothing came back within the bound although the request was complete. */
  hung: boolean;
}

/** Once an answer's head has arrived: a test telling when its body is complete. */
function completionCheck(answer: Buffer): ((all: Buffer) => boolean) | undefined {
  const headEnd = answer.indexOf("\r\n\r\n");
  if (headEnd < 0) return undefined;
  const head = answer.subarray(0, headEnd).toString("latin1");
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
  if (length) return (all) => all.length >= headEnd + 4 + Number(length[1]);
  if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) {
    return (all) => all.subarray(-5).toString("latin1") === "0\r\n\r\n";
  }
  return () => false;
}

export function exchange(port: number, request: HttpExchange): Promise<HttpOutcome> {
  const started = performance.now();
  const bound = request.boundMs ?? REQUEST_BOUND_MS;
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    const received: Buffer[] = [];
    let receivedBytes = 0;
    let settled = false;
    const timers: NodeJS.Timeout[] = [];
    const finish = (status: HttpOutcome["status"] | undefined, hung = false) => {
      if (settled) return;
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      socket.destroy();
      const answer = Buffer.concat(received).subarray(0, KEPT_ANSWER_BYTES).toString("latin1");
      const code = /^HTTP\/1\.[01] (\d{3})/.exec(answer);
      resolve({
        status: code ? Number(code[1]) : (status ?? "closed"),
        ms: performance.now() - started,
        answer,
        hung: code ? false : hung,
      });
    };
    timers.push(setTimeout(() => finish("no-answer", !request.incomplete), bound));
    let answerComplete: ((all: Buffer) => boolean) | undefined;
    socket.on("data", (chunk: Buffer) => {
      received.push(chunk);
      receivedBytes += chunk.length;
      const all = Buffer.concat(received);
      answerComplete ??= completionCheck(all);
      // An answer the server keeps its connection open after is complete once its body is.
      if (answerComplete?.(all) || receivedBytes > KEPT_ANSWER_BYTES) finish(undefined);
    });
    socket.on("end", () => finish("closed"));
    socket.on("close", () => finish("closed"));
    socket.on("error", (error: NodeJS.ErrnoException) =>
      finish(
        error.code === "ECONNREFUSED"
          ? "refused"
          : error.code === "ECONNRESET"
            ? "reset"
            : "closed",
      ),
    );
    socket.on("connect", () => {
      const [first, ...rest] = request.pieces;
      socket.write(first ?? Buffer.alloc(0));
      rest.forEach((piece, index) => {
        timers.push(
          setTimeout(
            () => {
              if (!settled && socket.writable) socket.write(piece);
            },
            (index + 1) * (request.pauseMs ?? 0),
          ),
        );
      });
    });
  });
}
