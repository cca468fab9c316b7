import type { AddressInfo } from "node:net";
import type { Logger } from "@rd/common";
import type { SMTPServerDataStream, SMTPServerOptions, SMTPServerSession } from "smtp-server";
import type { AddressGate } from "../access/address-gate.js";
import { parseEmailAddress } from "../addresses/email-address.js";
import { type IpAddress, parseIpAddress } from "../addresses/ip-range.js";
import type { ClientAuthenticator, ClientRecord } from "../clients/client-authenticator.js";
import { CLIENT_ID_PATTERN } from "../clients/client-secret.js";
import { parseListenAddress } from "../config/listen-address.js";
import { Errors } from "../errors.js";
import type { Ledger } from "../ledger/ledger.js";
import { NO_MESSAGE_ID } from "../ledger/ledger-events.js";
import type { MessageDispatch } from "../submission/message-dispatch.js";
import { MAX_RECIPIENTS } from "../submission/send-request.js";
import { messageIdOfRefusal, type SubmissionService } from "../submission/submission-service.js";
import { collectMessage } from "./message-collector.js";
import { PromptGreetingServer } from "./prompt-greeting-server.js";
import {
  gateRefusal,
  Replies,
  refusalFor,
  refusalOf,
  replyText,
  type SmtpRefusal,
  smtpError,
  suppressionRefusal,
} from "./smtp-replies.js";
import type { TlsCertificate } from "./tls-certificate.js";

// Policy: abuse limits of the submission port.
/** Failed AUTH attempts a connection may make; the last one is answered 421 and closed. */
export const MAX_AUTH_FAILURES = 3;
/** Connections served at once; one more is greeted with 421 and closed by smtp-server. */
export const MAX_CLIENTS = 100;
/** At shutdown a transaction in hand gets this long to finish (decisions: at most 10 s). */
export const CLOSE_GRACE_MS = 10_000;

/** What the port reads from the configuration, once, when it is built. */
export interface SubmissionServerSettings {
  /** `smtp_listen`, `host:port`. */
  readonly listen: string;
  /** `smtp_max_size`: advertised in EHLO and enforced on DATA. */
  readonly maxSize: number;
  /** `smtp_require_tls`: AUTH only after STARTTLS. */
  readonly requireTls: boolean;
  /** `smtp_timeout_secs`: how long the port waits for each client command or data chunk. */
  readonly timeoutSecs: number;
  /** Name in the greeting and EHLO reply. */
  readonly hostname: string;
  readonly tls: TlsCertificate;
}

export interface SubmissionServerDeps {
  settings: SubmissionServerSettings;
  /** The allowlist and per-IP throttle, counting in the same windows as HTTP requests. */
  gate: AddressGate;
  authenticator: ClientAuthenticator;
  submission: SubmissionService;
  /** The persisted dispatch each message goes through: the `250` means it is in the queue. */
  dispatch: MessageDispatch;
  ledger: Ledger;
  logger: Logger;
  /** Called for each connection, refused ones included (`relay_smtp_sessions_total`). */
  sessionOpened?: () => void;
}

/** The SMTP submission port (`smtp_listen`). */
export interface SubmissionServer {
  /** Starts listening; resolves with the bound `host:port`. */
  listen(): Promise<string>;
  /** The bound `host:port` once listening. */
  address(): string | undefined;
  /**
   * Stops accepting connections, lets every transaction in hand finish (at most
   * `CLOSE_GRACE_MS`), answers idle sessions 421, and resolves when no message is being stored.
   */
  close(): Promise<void>;
}

/**
 * Authenticated submission for outgoing mail: EHLO, STARTTLS, AUTH PLAIN/LOGIN with the client
 * credential, then MAIL/RCPT/DATA. The message goes through the same submission service as
 * `/send-raw`. Protocol only: every decision about a message is the service's, mapped to a
 * reply by `smtp-replies.ts`.
 */
export function createSubmissionServer(deps: SubmissionServerDeps): SubmissionServer {
  const { settings, gate, authenticator, submission, ledger, logger } = deps;
  const authFailures = new Map<string, number>();
  const inFlight = new Set<Promise<void>>();
  let closing = false;
  let bound: string | undefined;

  const refuse = (refusal: SmtpRefusal, messageId: string, session: SMTPServerSession) => {
    ledger.emit({
      event: "rejected",
      message_id: messageId,
      reason: refusal.reason,
      smtp_code: refusal.code,
    });
    logger.info("submission refused", {
      session: session.id,
      client_id: clientOf(session)?.client_id,
      code: refusal.code,
      reason: refusal.reason,
    });
    return smtpError(refusal);
  };

  async function authenticate(username: string, password: string, session: SMTPServerSession) {
    // As over HTTP: the allowlist and the throttle before any credential (and any bcrypt work).
    const verdict = await gate.admit(peerOf(session));
    if (!verdict.admitted) {
      const refusal = { ...gateRefusal(verdict), reason: verdict.reason };
      return { error: refuse(refusal, NO_MESSAGE_ID, session) };
    }
    // NOTE: smtp-server runs AUTH before STARTTLS only with `allowInsecureAuth`, and refuses it
    // otherwise with a non-standard 538; the decided reply is 530, so the check is here.
    if (settings.requireTls && !session.secure) {
      logger.info("AUTH before STARTTLS refused", { session: session.id });
      return { error: smtpError(Replies.startTlsFirst) };
    }
    const client = await authenticator.verify(username, password);
    if (client) {
      authFailures.delete(session.id);
      logger.info("client authenticated", { session: session.id, client_id: client.client_id });
      return { client };
    }
    const failures = (authFailures.get(session.id) ?? 0) + 1;
    authFailures.set(session.id, failures);
    ledger.emit({
      event: "rejected",
      message_id: NO_MESSAGE_ID,
      reason: "unauthorized",
      smtp_code: Replies.authFailed.code,
    });
    logger.warn("authentication failed", {
      session: session.id,
      remote_address: session.remoteAddress,
      // The id only when it has the shape of one: the field must never echo a secret typed there.
      client_id: CLIENT_ID_PATTERN.test(username) ? username : undefined,
      failures,
    });
    if (failures >= MAX_AUTH_FAILURES) return { error: smtpError(Replies.tooManyAuthFailures) };
    return { error: smtpError(Replies.authFailed) };
  }

  async function receive(stream: SMTPServerDataStream, session: SMTPServerSession) {
    const client = clientOf(session);
    const mailFrom = session.envelope.mailFrom;
    const collected = await collectMessage(stream, settings.maxSize).catch((error: Error) => {
      logger.info("message not received in full", { session: session.id, error: error.message });
      throw smtpError(Replies.localFailure);
    });
    if (!client || !mailFrom) throw smtpError(Replies.localFailure);
    if (collected.oversize) {
      const text = `Message size exceeds the limit of ${settings.maxSize} bytes`;
      throw refuse(refusalOf(Errors.payloadTooLarge.code, text), NO_MESSAGE_ID, session);
    }
    const outcome = await submission
      .submitRaw(
        client,
        {
          from: mailFrom.address,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: collected.raw,
        },
        { dispatch: deps.dispatch },
      )
      .catch((error: unknown) => {
        const refusal = refusalFor(error);
        if (refusal.code === Replies.localFailure.code) {
          logger.error("submission failed", { session: session.id, error: String(error) });
        }
        throw refuse(refusal, messageIdOfRefusal(error), session);
      });
    // Recipients suppressed since their RCPT TO: when none is left, nothing was queued.
    if (!outcome.results.some((result) => result.ok)) throw smtpError(Replies.recipientSuppressed);
    logger.info("message accepted", {
      session: session.id,
      client_id: client.client_id,
      message_id: outcome.messageId,
      rcpt_count: outcome.results.length,
      bytes: collected.raw.length,
    });
    return `2.0.0 Ok: queued as ${outcome.messageId}`;
  }

  const options: SMTPServerOptions = {
    name: settings.hostname,
    key: settings.tls.key,
    cert: settings.tls.cert,
    size: settings.maxSize,
    authMethods: ["PLAIN", "LOGIN"],
    // AUTH before STARTTLS is decided in `authenticate` (accepted unless `smtp_require_tls`).
    allowInsecureAuth: true,
    authRequiredMessage: replyText(Replies.authRequired),
    // Our replies carry their own enhanced codes (see `smtpError`).
    hideENHANCEDSTATUSCODES: true,
    maxClients: MAX_CLIENTS,
    // Recipients of one message: as many as one HTTP send takes.
    maxRecipients: MAX_RECIPIENTS,
    // NOTE: 0 leaves smtp-server's own idle timeout (60 s).
    socketTimeout: settings.timeoutSecs * 1000,
    closeTimeout: CLOSE_GRACE_MS,
    disableReverseLookup: true,
    logger: false,

    onConnect(session, callback) {
      deps.sessionOpened?.();
      void gate.admit(peerOf(session)).then((verdict) => {
        if (verdict.admitted) return callback();
        logger.warn("connection refused", {
          session: session.id,
          remote_address: session.remoteAddress,
          reason: verdict.reason,
        });
        // smtp-server answers an onConnect error in place of the greeting, then closes.
        callback(smtpError(gateRefusal(verdict)));
      });
    },

    onAuth(auth, session, callback) {
      authenticate(auth.username ?? "", auth.password ?? "", session).then(
        (result) =>
          "client" in result ? callback(null, { user: result.client }) : callback(result.error),
        (error: Error) => {
          logger.error("authentication could not be checked", { error: error.message });
          callback(smtpError(Replies.localFailure));
        },
      );
    },

    onMailFrom(address, session, callback) {
      const verified = clientOf(session);
      if (!verified) return callback(smtpError(Replies.authRequired));
      // Every message meets the allowlist and the client as they are now, not as they were at
      // AUTH: a session may stay open long after its client was disabled or its address dropped.
      if (!gate.allows(peerOf(session))) {
        const refusal = { ...Replies.addressRefused, reason: "forbidden" };
        return callback(refuse(refusal, NO_MESSAGE_ID, session));
      }
      const client = authenticator.current(verified);
      if (!client) {
        const refusal = { ...Replies.credentialRevoked, reason: "unauthorized" };
        const error = refuse(refusal, NO_MESSAGE_ID, session);
        // Authentication is no longer in force: the client may AUTH again (a rotated secret).
        session.user = undefined;
        return callback(error);
      }
      // DATA is checked against the row read here (its domain list included).
      session.user = client;
      try {
        submission.authorizeSender(client, address.address);
        callback();
      } catch (error) {
        callback(refuse(refusalFor(error), NO_MESSAGE_ID, session));
      }
    },

    onRcptTo(address, session, callback) {
      const client = clientOf(session);
      if (!client) return callback(smtpError(Replies.authRequired));
      if (!parseEmailAddress(address.address)) return callback(smtpError(Replies.badRecipient));
      // A suppressed recipient is refused on its own line: the client's MTA bounces it alone.
      submission.suppressionOf(client, address.address).then(
        (reason) =>
          callback(
            reason === undefined ? null : smtpError(suppressionRefusal(address.address, reason)),
          ),
        (error: unknown) => callback(smtpError(refusalFor(error))),
      );
    },

    onData(stream, session, callback) {
      const done = receive(stream, session).then(
        (reply) => callback(null, reply),
        (error: Error) => callback(error),
      );
      const tracked = done.finally(() => {
        inFlight.delete(tracked);
        if (closing) dismissIdle();
      });
      inFlight.add(tracked);
    },

    onClose(session) {
      authFailures.delete(session.id);
    },
  };

  const server = new PromptGreetingServer(options);
  server.on("error", (error: Error) => {
    // Client-side failures (aborted handshakes, resets) land here; they concern one session.
    logger.debug("smtp connection error", { error: error.message });
  });

  /** Answers 421 to every session with no transaction in hand (smtp-server then closes it). */
  function dismissIdle(): void {
    for (const connection of server.connections) {
      if (!connection.session.envelope.mailFrom) {
        connection.send(Replies.shuttingDown.code, replyText(Replies.shuttingDown));
      }
    }
  }

  return {
    async listen() {
      const { host, port } = parseListenAddress(settings.listen);
      await new Promise<void>((resolve, reject) => {
        server.server.once("error", reject);
        server.listen(port, host, () => {
          server.server.off("error", reject);
          resolve();
        });
      });
      const address = server.server.address() as AddressInfo;
      bound = `${host}:${address.port}`;
      logger.info("smtp submission listening", {
        listen: bound,
        max_size: settings.maxSize,
        require_tls: settings.requireTls,
      });
      return bound;
    },
    address: () => bound,
    async close() {
      closing = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      dismissIdle();
      await closed;
      // A session cut at the deadline may still be storing its message: let it finish.
      await Promise.all(inFlight);
    },
  };
}

function clientOf(session: SMTPServerSession): ClientRecord | undefined {
  return session.user as ClientRecord | undefined;
}

/** The TCP peer (smtp-server already reports an IPv4-mapped peer in its IPv4 form). */
function peerOf(session: SMTPServerSession): IpAddress | undefined {
  return parseIpAddress(session.remoteAddress);
}
