import { isIP, Socket } from "node:net";
import type SMTPConnection from "nodemailer/lib/smtp-connection/index.js";
import { DeliveryError } from "./delivery-error.js";
// Installs the faster DATA encoder on nodemailer before any message is sent.
import "./fast-dot-stuffing.js";
import { type MxHost, mxHostLabel } from "./mx-resolver.js";
import type { PooledSession, SmtpSessionPool } from "./smtp-session-pool.js";

/** SMTP port of a recipient's MX (RFC 5321 §4.5.4.1), used unless `mx_override` names one. */
export const SMTP_PORT = 25;

export interface SmtpTransportOptions {
  /** EHLO name; must match the PTR of the outgoing IP. */
  heloHostname: string;
  /** Bound on each dialog step: connection, greeting, and every reply (`smtp_timeout_secs`). */
  timeoutMs: number;
  /** Port for hosts that do not name one; defaults to `SMTP_PORT`. */
  defaultPort?: number;
  /** Idle sessions to reuse; without it every delivery opens and quits its own connection. */
  pool?: SmtpSessionPool;
}

export interface SmtpDeliveryRequest {
  envelopeFrom: string;
  rcpt: string;
  /** The signed message, CRLF line endings; passed to every host without re-reading. */
  raw: Buffer;
  /** Hosts in the order to try them (from the MX resolver). */
  hosts: readonly MxHost[];
  /** Refuse to deliver in plaintext: a host without STARTTLS is a temporary failure. */
  requireTls: boolean;
  /** Called as each host is tried, before connecting (the ledger's `attempt` event). */
  onHost?: (host: string) => void;
}

export interface SmtpDeliveryReceipt {
  /** The host that accepted the message, as `mxHostLabel` names it. */
  host: string;
  /** The remote server's final reply, e.g. `250 2.0.0 Ok: queued as 4Xy`. */
  response: string;
  tls: boolean;
}

/** One delivery attempt: tries `hosts` in order until one accepts or refuses the message. */
export type SmtpTransport = (request: SmtpDeliveryRequest) => Promise<SmtpDeliveryReceipt>;

type SmtpError = SMTPConnection.SMTPError;

function asSmtpError(error: unknown): SmtpError {
  return error instanceof Error ? (error as SmtpError) : new Error(String(error));
}

/** The remote reply on one line (`550 5.1.1 unknown user`), or the local error message. */
function describe(error: SmtpError): string {
  if (error.response) return error.response.replace(/\r?\n/g, " ").trim();
  return error.message;
}

function classify(error: SmtpError, host: string, tls: boolean): DeliveryError {
  const code = error.responseCode;
  const text = describe(error);
  if (code !== undefined && code >= 500) {
    return new DeliveryError(text, { permanent: true, smtpCode: code, host, tls });
  }
  if (code !== undefined && code >= 400) {
    return new DeliveryError(text, { permanent: false, smtpCode: code, host, tls });
  }
  const prefix = error.code === "ETIMEDOUT" ? "timeout" : "connection error";
  return new DeliveryError(`${prefix} with ${host}: ${text}`, { permanent: false, host, tls });
}

interface SessionTarget {
  label: string;
  /** What to connect to: an address, or the override's name as written. */
  address: string;
  port: number;
  /** SNI name: the MX name, unless that is an IP literal. */
  servername: string | undefined;
}

/**
 * Wraps SMTPConnection's callback-and-event API: resolves once EHLO (and STARTTLS, when
 * offered) is done. NOTE: SMTPConnection reports connection-time failures only through its
 * `error` event, never through the `connect` callback.
 */
async function openSession(
  target: SessionTarget,
  options: SmtpTransportOptions,
  plaintextOnly: boolean,
): Promise<SMTPConnection> {
  // NOTE: loaded at the first delivery, not at boot: an idle relay does not hold it in memory.
  const { default: Connection } = await import("nodemailer/lib/smtp-connection/index.js");
  // NOTE: nodemailer writes DATA's closing ".\r\n" on its own; with Nagle's algorithm that write
  // waits for the server to acknowledge the body, which a delayed ACK holds up to 40 ms: one
  // such wait per message. The socket is handed over unconnected, so the option holds from
  // the first byte and across STARTTLS.
  const socket = new Socket();
  socket.setNoDelay(true);
  return new Promise((resolve, reject) => {
    const connection = new Connection({
      socket,
      host: target.address,
      port: target.port,
      name: options.heloHostname,
      // NOTE: `servername` (SNI) is read by SMTPConnection but missing from its type declarations.
      ...({ servername: target.servername } as object),
      ignoreTLS: plaintextOnly,
      // A server that refuses the STARTTLS command still gets the mail in plaintext;
      // a failed handshake is handled by the caller (new plaintext connection).
      opportunisticTLS: true,
      // Opportunistic TLS: MX certificates are not verified (no DANE/MTA-STS here).
      tls: { rejectUnauthorized: false },
      connectionTimeout: options.timeoutMs,
      greetingTimeout: options.timeoutMs,
      socketTimeout: options.timeoutMs,
      logger: false,
    });
    const failed = (error: SmtpError) => {
      // NOTE: a handshake that fails after STARTTLS surfaces as a plain socket error (ESOCKET);
      // SMTPConnection's `upgrading` flag (not in its type declarations) tells them apart.
      if ((connection as unknown as { upgrading?: boolean }).upgrading) error.code = "ETLS";
      reject(error);
    };
    connection.once("error", failed);
    connection.connect(() => {
      connection.off("error", failed);
      resolve(connection);
    });
  });
}

function sendMessage(
  connection: SMTPConnection,
  request: SmtpDeliveryRequest,
): Promise<SMTPConnection.SentMessageInfo> {
  return new Promise((resolve, reject) => {
    const closed = () => reject(new Error("connection closed during the transaction"));
    connection.once("error", reject);
    connection.once("end", closed);
    connection.send(
      {
        from: request.envelopeFrom,
        to: [request.rcpt],
        size: request.raw.length,
        use8BitMime: true,
      },
      request.raw,
      (error, info) => {
        connection.off("error", reject);
        connection.off("end", closed);
        if (error) reject(error);
        else resolve(info);
      },
    );
  });
}

function quit(connection: SMTPConnection): void {
  // Late socket errors after QUIT must not surface as unhandled 'error' events.
  connection.on("error", () => {});
  connection.quit();
}

/** Targets for one host: each resolved address, or the override's name as written. */
function targetsOf(host: MxHost, defaultPort: number): SessionTarget[] {
  const label = mxHostLabel(host);
  const port = host.port ?? defaultPort;
  const servername = isIP(host.name) === 0 ? host.name : undefined;
  const addresses = host.addresses ?? [host.name];
  return addresses.map((address) => ({ label, address, port, servername }));
}

/**
 * What one host did with the message. `refused` ends the attempt (the transaction had begun,
 * so another host must not get a second copy); `unreachable` moves on to the next host.
 */
type HostOutcome =
  | { kind: "delivered"; receipt: SmtpDeliveryReceipt }
  | { kind: "refused"; error: DeliveryError }
  | { kind: "unreachable"; error: DeliveryError };

/**
 * Delivers over SMTP with nodemailer's SMTPConnection, one recipient per transaction.
 * Within one attempt a host that cannot be reached, times out, or refuses the session before
 * MAIL FROM (greeting, EHLO, TLS) is skipped for the next one; once the transaction starts,
 * that host's answer decides the attempt (5xx permanent; 4xx, timeouts, drops temporary).
 */
export function createSmtpTransport(options: SmtpTransportOptions): SmtpTransport {
  async function openWithFallback(
    target: SessionTarget,
    requireTls: boolean,
  ): Promise<SMTPConnection> {
    try {
      return await openSession(target, options, false);
    } catch (error) {
      const failure = asSmtpError(error);
      if (failure.code !== "ETLS") throw failure;
      if (requireTls) {
        throw new DeliveryError(`TLS handshake with ${target.label} failed: ${failure.message}`, {
          permanent: false,
          host: target.label,
        });
      }
      // NOTE: a failed handshake leaves the session unusable; like Postfix and ZoneMTA,
      // retry at once on a new connection that does not offer to upgrade.
      return openSession(target, options, true);
    }
  }

  async function tryTarget(
    target: SessionTarget,
    request: SmtpDeliveryRequest,
  ): Promise<HostOutcome> {
    const key = `${options.heloHostname}|${target.address}|${target.port}`;
    let session: PooledSession | undefined = await options.pool?.take(key);
    try {
      session ??= { connection: await openWithFallback(target, request.requireTls), uses: 0 };
    } catch (error) {
      const failure =
        error instanceof DeliveryError ? error : classify(asSmtpError(error), target.label, false);
      return { kind: "unreachable", error: failure };
    }
    const { connection } = session;
    const tls = connection.secure;
    if (request.requireTls && !tls) {
      quit(connection);
      const error = new DeliveryError(`TLS required but ${target.label} does not offer STARTTLS`, {
        permanent: false,
        host: target.label,
      });
      return { kind: "unreachable", error };
    }
    try {
      const info = await sendMessage(connection, request);
      const carried = { connection, uses: session.uses + 1 };
      if (options.pool) options.pool.release(key, carried);
      else quit(connection);
      const response = info.response.replace(/\r?\n/g, " ");
      return { kind: "delivered", receipt: { host: target.label, response, tls } };
    } catch (error) {
      const failure = asSmtpError(error);
      // A refusal leaves the session usable: end it politely. Anything else: drop it.
      if (failure.responseCode !== undefined) quit(connection);
      else connection.close();
      return { kind: "refused", error: classify(failure, target.label, tls) };
    }
  }

  return async (request) => {
    // Built only when needed: an error's stack trace is a cost every delivery would pay.
    let lastFailure: DeliveryError | undefined;
    for (const host of request.hosts) {
      const label = mxHostLabel(host);
      request.onHost?.(label);
      const targets = targetsOf(host, options.defaultPort ?? SMTP_PORT);
      if (targets.length === 0) {
        lastFailure = new DeliveryError(`${label} has no A/AAAA record`, {
          permanent: false,
          host: label,
        });
      }
      for (const target of targets) {
        const outcome = await tryTarget(target, request);
        if (outcome.kind === "delivered") return outcome.receipt;
        if (outcome.kind === "refused") throw outcome.error;
        lastFailure = outcome.error;
      }
    }
    throw lastFailure ?? new DeliveryError("no MX host to deliver to", { permanent: false });
  };
}
