/**
 * Why one delivery step failed. `permanent` failures (a 5xx, a domain that cannot receive mail)
 * stop all further attempts; temporary ones (4xx, timeouts, connection and DNS errors) are retried.
 * The message starts with the SMTP code when the remote server gave one: it becomes the
 * recipient's `detail` and the queue row's `last_error` as is.
 */
export class DeliveryError extends Error {
  readonly permanent: boolean;
  /** The remote SMTP reply code, when a server answered. */
  readonly smtpCode: number | undefined;
  /** The MX host the failure happened on, when one was reached or tried. */
  readonly host: string | undefined;
  /** Whether the failing session was running over TLS. */
  readonly tls: boolean;

  constructor(
    message: string,
    details: { permanent: boolean; smtpCode?: number; host?: string; tls?: boolean },
  ) {
    super(message);
    this.name = "DeliveryError";
    this.permanent = details.permanent;
    this.smtpCode = details.smtpCode;
    this.host = details.host;
    this.tls = details.tls ?? false;
  }
}
