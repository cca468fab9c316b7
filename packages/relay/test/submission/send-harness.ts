import { dkimVerify } from "mailauth";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { type DnsServer, startDnsServer, type Zone } from "../fixtures/dns-server.js";
import { type SmtpSink, type SmtpSinkOptions, startSmtpSink } from "../fixtures/smtp-sink.js";
import { TestRelay, type TestRelayOptions } from "../helpers/relay-harness.js";

/** Splits a long TXT value into 255-character strings, as it must be published. */
function txtStrings(value: string): string[] {
  return value.match(/.{1,255}/g) ?? [];
}

export interface SendRelayOptions extends TestRelayOptions {
  /** Destination domain → the sink standing in for its MX (through `mx_override`). */
  sinks?: Record<string, SmtpSinkOptions>;
}

/**
 * A relay set up for sending: a DNS server publishing each sender domain's DKIM record
 * (the relay's `RELAY_DNS`), SMTP sinks as destination MXs, no send delay and one attempt per
 * recipient, so that no test waits for the real schedules.
 */
export class SendRelay {
  private constructor(
    readonly relay: TestRelay,
    readonly dns: DnsServer,
    readonly sinks: Record<string, SmtpSink>,
    private zone: Zone,
  ) {}

  static async start(options: SendRelayOptions = {}): Promise<SendRelay> {
    const dns = await startDnsServer({});
    const sinks: Record<string, SmtpSink> = {};
    for (const [domain, sinkOptions] of Object.entries(options.sinks ?? {})) {
      sinks[domain] = await startSmtpSink(sinkOptions);
    }
    const mx_override = Object.fromEntries(
      Object.entries(sinks).map(([domain, sink]) => [domain, [sink.address]]),
    );
    const relay = await TestRelay.start({
      ...options,
      config: {
        api_rate_per_min: 0,
        send_delay_secs: 0,
        sync_retry_delays_secs: [0],
        mx_override,
        ...options.config,
      },
      env: { RELAY_DNS: dns.address, ...options.env },
    });
    return new SendRelay(relay, dns, sinks, {});
  }

  get app() {
    return this.relay.app;
  }

  /** Registers a sender domain (a new key) and publishes its DKIM record; active by default. */
  async addDomain(
    domain: string,
    options: { status?: "active" | "pending"; limits?: { per_hour: number; per_day: number } } = {},
  ): Promise<void> {
    const response = await this.relay.admin("POST", "/domains", { domain });
    if (response.statusCode !== 201) throw new Error(`POST /domains: ${response.body}`);
    const kit = response.json() as { dkim: { host: string; value: string } };
    this.zone = { ...this.zone, [kit.dkim.host]: { TXT: [txtStrings(kit.dkim.value)] } };
    this.dns.setZone(this.zone);
    // What a passing GET /check does: promote the domain in the live configuration.
    await this.relay.relay.config.update((file) => {
      const entry = file.domains?.[domain];
      if (!entry) throw new Error(`${domain} missing from the configuration`);
      entry.status = options.status ?? "active";
      if (options.limits) entry.limits = options.limits;
    });
  }

  /** Creates a client for `domains`; returns its Basic authorization header value. */
  async addClient(domains: string[]): Promise<{ clientId: string; authorization: string }> {
    const response = await this.relay.admin("POST", "/clients", { name: "sender", domains });
    if (response.statusCode !== 201) throw new Error(`POST /clients: ${response.body}`);
    const { client_id, secret } = response.json() as { client_id: string; secret: string };
    const basic = Buffer.from(`${client_id}:${secret}`).toString("base64");
    return { clientId: client_id, authorization: `Basic ${basic}` };
  }

  /** `POST` to a send endpoint through `inject`. */
  post(url: "/send" | "/send-raw", payload: unknown, headers: Record<string, string> = {}) {
    return this.app.inject({ method: "POST", url, payload: payload as object, headers });
  }

  /** The ledger events emitted so far (parsed `fields.ledger`). */
  ledger(): Array<Record<string, unknown>> {
    return this.ledgerLines().map((line) => line.event);
  }

  /** One message's events in order, each with the request id of its line (none: undefined). */
  requestIdsOf(messageId: string): Array<[event: unknown, requestId: string | undefined]> {
    return this.ledgerLines()
      .filter((line) => line.event.message_id === messageId)
      .map((line) => [line.event.event, line.requestId]);
  }

  private ledgerLines() {
    return this.relay.logs.forTarget("relay::ledger").map((line) => {
      const fields = line.fields as { ledger: string; request_id?: string };
      const event = JSON.parse(fields.ledger) as Record<string, unknown>;
      return { event, requestId: fields.request_id };
    });
  }

  /** The published DKIM records: name → TXT value (its strings joined). */
  dkimRecords(): Record<string, string> {
    return Object.fromEntries(
      Object.entries(this.zone)
        .filter(([name]) => name.includes("._domainkey."))
        .map(([name, records]) => [name, (records.TXT?.[0] ?? []).join("")]),
    );
  }

  /** DKIM results of a received message, checked by mailauth against the published records. */
  async verifyDkim(raw: Buffer) {
    const { resolve } = createDnsResolver(this.dns.address);
    const { results } = await dkimVerify(raw, { resolver: resolve as never });
    return results;
  }

  async close(): Promise<void> {
    await this.relay.close();
    await this.dns.close();
    await Promise.all(Object.values(this.sinks).map((sink) => sink.close()));
  }
}
