import { connect as connectTcp, type Socket } from "node:net";
import SMTPConnection from "nodemailer/lib/smtp-connection/index.js";
import { SendRelay, type SendRelayOptions } from "../submission/send-harness.js";

/** A client credential as an SMTP client types it. */
export interface Credential {
  readonly user: string;
  readonly pass: string;
}

/**
 * A relay with its submission port on 127.0.0.1 (`smtp_listen`, port 0), listening for real,
 * on top of the sending harness (DNS with the DKIM records, SMTP sinks as destination MXs).
 */
export class SmtpRelay {
  private constructor(readonly send: SendRelay) {}

  static async start(options: SendRelayOptions = {}): Promise<SmtpRelay> {
    const send = await SendRelay.start({
      ...options,
      config: { smtp_listen: "127.0.0.1:0", ...options.config },
    });
    await send.relay.relay.listen();
    return new SmtpRelay(send);
  }

  /**
   * An asynchronous relay (`RELAY_REDIS` set, ticker off) whose mail for `dest.test` reaches a
   * plaintext sink, with `shop.test` active without quota and a client for it.
   */
  static async asyncWithShop(): Promise<{ relay: SmtpRelay; shop: Credential }> {
    const relay = await SmtpRelay.start({
      sinks: { "dest.test": { tls: "none" } },
      env: { RELAY_REDIS: "" },
      config: { tick_interval_secs: 0 },
    });
    await relay.send.addDomain("shop.test", { limits: { per_hour: 0, per_day: 0 } });
    return { relay, shop: await relay.addClient(["shop.test"]) };
  }

  /** The submission port of the relay running now. */
  get port(): number {
    const address = this.send.relay.relay.smtp?.address();
    if (!address) throw new Error("the submission port is not listening");
    return Number(address.slice(address.lastIndexOf(":") + 1));
  }

  /** A client for `domains` with the credential it authenticates with. */
  async addClient(domains: string[]): Promise<Credential & { clientId: string }> {
    const { clientId, authorization } = await this.send.addClient(domains);
    const decoded = Buffer.from(authorization.slice("Basic ".length), "base64").toString();
    return { clientId, user: clientId, pass: decoded.slice(decoded.indexOf(":") + 1) };
  }

  /** A nodemailer client connected to the port (STARTTLS unless `ignoreTLS`). */
  client(options: Partial<SMTPConnection.Options> = {}): Promise<SmtpClient> {
    return SmtpClient.connect({ port: this.port, ...options });
  }

  /** A line-level client for what a library would not do (stall, pipeline, count). */
  raw(host = "127.0.0.1"): Promise<RawSmtp> {
    return RawSmtp.connect(this.port, host);
  }

  /** `rejected` ledger events so far. */
  rejections(): Array<Record<string, unknown>> {
    return this.send.ledger().filter((event) => event.event === "rejected");
  }

  close(): Promise<void> {
    return this.send.close();
  }
}

/** nodemailer's SMTPConnection with promises. */
export class SmtpClient {
  private constructor(private readonly connection: SMTPConnection) {}

  static connect(options: SMTPConnection.Options): Promise<SmtpClient> {
    const connection = new SMTPConnection({
      host: "127.0.0.1",
      // The port presents a self-signed certificate made at boot.
      tls: { rejectUnauthorized: false },
      connectionTimeout: 5000,
      ...options,
    });
    return new Promise((resolve, reject) => {
      connection.once("error", reject);
      connection.connect(() => {
        connection.off("error", reject);
        // Errors after a refusal that closes the session reach the pending call instead.
        connection.on("error", () => undefined);
        resolve(new SmtpClient(connection));
      });
    });
  }

  /** Whether the session runs over TLS (STARTTLS done). */
  get secure(): boolean {
    return (this.connection as unknown as { secure: boolean }).secure;
  }

  login(credential: Credential, method?: "PLAIN" | "LOGIN"): Promise<void> {
    return new Promise((resolve, reject) =>
      this.connection.login(
        { user: credential.user, pass: credential.pass, ...(method && { method }) },
        (error) => (error ? reject(error) : resolve()),
      ),
    );
  }

  /** Sends `raw` with its envelope; resolves with the server's final reply line. */
  send(envelope: { from: string; to: string[] }, raw: string | Buffer): Promise<string> {
    return new Promise((resolve, reject) =>
      this.connection.send(envelope, raw, (error, info) =>
        error ? reject(error) : resolve(info.response),
      ),
    );
  }

  /** Resolves when the server has closed the connection. */
  ended(): Promise<void> {
    return new Promise((resolve) => this.connection.once("end", () => resolve()));
  }

  quit(): void {
    this.connection.quit();
  }

  close(): void {
    this.connection.close();
  }
}

/** A plain socket speaking SMTP line by line. */
export class RawSmtp {
  private buffer = "";
  private waiters: Array<() => void> = [];
  private closedFlag = false;

  private constructor(readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      this.buffer += chunk;
      this.wake();
    });
    socket.on("close", () => {
      this.closedFlag = true;
      this.wake();
    });
    socket.on("error", () => undefined);
  }

  /** `localAddress`: the client's own address (any 127.0.0.0/8 address reaches 127.0.0.1). */
  static connect(port: number, host = "127.0.0.1", localAddress?: string): Promise<RawSmtp> {
    return new Promise((resolve, reject) => {
      const socket = connectTcp({ port, host, localAddress }, () => resolve(new RawSmtp(socket)));
      socket.once("error", reject);
    });
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The next complete reply (the last line of a multi-line one is `NNN text`). */
  async reply(timeoutMs = 5000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const lines = this.buffer.split("\r\n");
      const last = lines.findIndex((line) => /^\d{3} /.test(line));
      if (last >= 0) {
        this.buffer = lines.slice(last + 1).join("\r\n");
        return lines.slice(0, last + 1).join("\n");
      }
      if (this.closedFlag) throw new Error(`closed without a reply (got ${this.buffer})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no reply in ${timeoutMs} ms (got ${this.buffer})`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Sends one command line and returns the reply. */
  async command(line: string): Promise<string> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  /** Resolves once the server has closed the connection. */
  async whenClosed(timeoutMs = 5000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closedFlag) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("the connection is still open");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** `AUTH PLAIN` initial response for a credential. */
export function plainToken(credential: Credential): string {
  return Buffer.from(`\0${credential.user}\0${credential.pass}`).toString("base64");
}

/** A small RFC 5322 message with CRLF line endings. */
export function rfc5322(headers: Record<string, string | string[]>, body = "hello\r\n"): string {
  const lines = Object.entries(headers).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((one) => `${name}: ${one}`),
  );
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}
