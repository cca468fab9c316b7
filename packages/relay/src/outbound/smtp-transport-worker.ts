/**
 * The worker thread of `smtp-transport-thread.ts`: runs the SMTP transport (nodemailer's
 * dialog, its sockets and TLS, the DATA encoding, the session pool) for the main thread.
 * Each request is one delivery attempt; the answers carry plain data only.
 */
import { parentPort } from "node:worker_threads";
import { messageOf } from "@rd/common/error-message";
import { DeliveryError } from "./delivery-error.js";
import { createSmtpSessionPool } from "./smtp-session-pool.js";
import { createSmtpTransport } from "./smtp-transport.js";
import type { ThreadAnswer, ThreadRequest } from "./smtp-transport-thread.js";

const port = parentPort;
if (!port) throw new Error("smtp-transport-worker runs only as a worker thread");

// Consecutive messages to one host share a connection (RSET between them).
const pool = createSmtpSessionPool();
const answer = (message: ThreadAnswer) => port.postMessage(message);

port.on("message", async ({ id, options, request }: ThreadRequest) => {
  const transport = createSmtpTransport({ ...options, pool });
  try {
    const receipt = await transport({
      ...request,
      // A Buffer arrives as a plain Uint8Array: the same bytes, seen as a Buffer again.
      raw: Buffer.from(request.raw.buffer, request.raw.byteOffset, request.raw.byteLength),
      onHost: (host) => answer({ id, host }),
    });
    answer({ id, receipt });
  } catch (error) {
    if (error instanceof DeliveryError) {
      const { message, permanent, smtpCode, host, tls } = error;
      answer({ id, error: { message, permanent, smtpCode, host, tls } });
    } else {
      answer({ id, failure: messageOf(error) });
    }
  }
});
