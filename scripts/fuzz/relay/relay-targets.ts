import type { FuzzInput, Target } from "../campaign-types.js";
import { HOSTILE_KEYS, hostileNumber, hostileString, randomUnicode } from "../hostile-values.js";
import { httpInput, requestInput } from "../http-input.js";
import type { Prng } from "../prng.js";
import { httpBytes } from "../raw-http.js";
import {
  contentType,
  hostileQuery,
  jsonBody,
  pathSegment,
  withContentType,
} from "../request-parts.js";
import { rawMessage } from "./mime-inputs.js";

// The relay's HTTP targets: /send and /send-raw bodies, and the admin calls.

export interface RelayContext {
  port: number;
  adminToken: string;
  /** HTTP Basic value of the fuzzer's own client (never disabled, rotated or deleted). */
  authorization: string;
  clientId: string;
  /** The fuzzer's sender domain (never deleted). */
  senderDomain: string;
  /** A recipient domain whose MX is the local SMTP sink. */
  sinkDomain: string;
  /** A recipient domain whose MX refuses connections. */
  deadDomain: string;
  /** Client ids the admin target created (it may change these freely). */
  createdClients: string[];
  /** Domains the admin target created. */
  createdDomains: string[];
}

/** `GET /check` answers 503 when a check fails, which it does here (no DNS is reachable). */
const CHECK_DOCUMENTED = [503] as const;

function recipients(context: RelayContext, random: Prng): string[] {
  return Array.from(
    { length: random.chance(0.9) ? random.between(1, 3) : random.size(1200) },
    (_, i) =>
      random.chance(0.8)
        ? `rcpt${i}@${context.sinkDomain}`
        : random.pick([
            `x@${context.deadDomain}`,
            `x@nowhere-${random.hex(6)}.test`,
            hostileString(random, 300),
          ]),
  );
}

function credential(context: RelayContext, random: Prng): Record<string, string> {
  if (random.chance(0.9)) return { authorization: context.authorization };
  return random.pick<Record<string, string>>([
    {},
    { "x-auth-token": context.adminToken },
    {
      authorization: `Basic ${Buffer.from(`${context.clientId}:${random.hex(48)}`).toString("base64")}`,
    },
    { authorization: `Basic ${Buffer.from(hostileString(random, 500)).toString("base64")}` },
    { authorization: hostileString(random, 500).replace(/[\r\n]/g, "") },
  ]);
}

/** A subject or name that is valid JSON but hard on the encoder (long runs, no spaces, UTF-8). */
function hardText(random: Prng): string {
  return random.pick([
    () => "é".repeat(random.size(1_200_000)),
    () => "x".repeat(random.size(200_000)),
    () => randomUnicode(random, random.size(5000)),
    () => `${"word ".repeat(random.size(50_000))}`,
  ])();
}

export function sendTarget(context: RelayContext): Target {
  return {
    name: "send-json",
    generate(random): FuzzInput {
      const template: Record<string, unknown> = {
        from: random.chance(0.5)
          ? `fuzz@${context.senderDomain}`
          : `"Fuzz, Tester" <fuzz@${context.senderDomain}>`,
        to: recipients(context, random),
        subject: random.chance(0.3) ? hardText(random) : "hello",
        ...(random.chance(0.7) && { text: random.chance(0.2) ? hardText(random) : "text body" }),
        ...(random.chance(0.4) && { html: "<p>html</p>" }),
      };
      const body = jsonBody(template, random, 0.4);
      return requestInput(context.port, {
        method: "POST",
        path: "/send",
        headers: withContentType(contentType(random), credential(context, random)),
        body,
      });
    },
  };
}

export function sendRawTarget(context: RelayContext): Target {
  return {
    name: "send-raw",
    generate(random): FuzzInput {
      const to = recipients(context, random).slice(0, 5);
      const from = `fuzz@${context.senderDomain}`;
      const message = rawMessage({ from, to }, random);
      const template = {
        from: random.chance(0.95) ? from : hostileString(random),
        to,
        raw: message.text,
      };
      const body = jsonBody(template, random, 0.85);
      const bytes = httpBytes(context.port, {
        method: "POST",
        path: "/send-raw",
        headers: withContentType(contentType(random), credential(context, random)),
        body,
      });
      return httpInput(context.port, `/send-raw: ${message.summary} (${bytes.length} B)`, {
        pieces: [bytes],
      });
    },
  };
}

/** Domain names: valid, at the length limits, built-in object keys, odd forms. */
function domainName(context: RelayContext, random: Prng): string {
  const label = (length: number) => `d${random.hex(length - 1)}`;
  return random.pick([
    () => `fz${random.hex(8)}.test`,
    () => random.pick(HOSTILE_KEYS),
    () => [label(63), label(63), label(63), label(61)].join("."), // 253 characters
    () => `${label(63)}.${label(63)}.${label(63)}.${label(62)}`, // 254: one too many
    () => `${label(64)}.test`,
    () => `FZ${random.hex(4).toUpperCase()}.TEST`,
    () => `fz${random.hex(4)}.test.`,
    () => `xn--${random.hex(6)}.test`,
    () => `fêz${random.hex(4)}.test`,
    () => random.pick(context.createdDomains.length ? context.createdDomains : ["none.test"]),
    () => hostileString(random, 400),
  ])();
}

function clientId(context: RelayContext, random: Prng): string {
  return random.pick([
    () =>
      context.createdClients.length ? random.pick(context.createdClients) : `cli_${random.hex(16)}`,
    () => `cli_${random.hex(16)}`,
    () => random.pick(HOSTILE_KEYS),
    () => hostileString(random, 300),
  ])();
}

function cidr(random: Prng): string {
  return random.pick([
    () => "127.0.0.1",
    () => "::ffff:127.0.0.1",
    () => "::1",
    () => "127.0.0.0/8",
    () => `10.${random.below(256)}.0.0/${random.between(0, 40)}`,
    () => `2001:db8::/${random.between(0, 140)}`,
    () => "0.0.0.0/0",
    () => "::ffff:0:0/96",
    () => "1.2.3",
    () => "01.02.03.04",
    () => hostileString(random, 80),
  ])();
}

/** Keeps what a creating call's answer names (ids the service generates), for later calls. */
function remembering(input: FuzzInput, pattern: RegExp, into: string[]): FuzzInput {
  return {
    ...input,
    async run() {
      const outcome = await input.run();
      const created = pattern.exec(outcome.detail)?.[1];
      if (outcome.status.startsWith("2") && created !== undefined) into.push(created);
      return outcome;
    },
  };
}

export function adminTarget(context: RelayContext, restore: () => Promise<boolean>): Target {
  return {
    name: "admin",
    generate(random): FuzzInput {
      const admin: Record<string, string> = random.chance(0.92)
        ? { "x-auth-token": context.adminToken }
        : random.pick<Record<string, string>>([
            {},
            { "x-auth-token": hostileString(random, 300).replace(/[\r\n]/g, "") },
            { authorization: context.authorization },
          ]);
      const json = (
        method: string,
        path: string,
        template: unknown,
        after?: () => Promise<boolean>,
      ) =>
        requestInput(
          context.port,
          {
            method,
            path,
            headers: withContentType(contentType(random), admin),
            body: jsonBody(template, random),
          },
          after ? { restore: after } : {},
        );
      const plain = (method: string, path: string, documented: readonly number[] = []) =>
        requestInput(context.port, { method, path, headers: admin }, { documented });
      const domain = () => pathSegment(domainName(context, random));
      const protectedDomain = (name: string) =>
        name.toLowerCase().replace(/\.$/, "") === context.senderDomain;
      const client = () => {
        const id = clientId(context, random);
        return pathSegment(id === context.clientId ? `cli_${random.hex(16)}` : id);
      };
      const calls: Array<() => FuzzInput> = [
        () =>
          remembering(
            json("POST", "/domains", {
              domain: domainName(context, random),
              ...(random.chance(0.3) && { selector: hostileString(random, 100) }),
            }),
            /"domain":"([^"]+)"/,
            context.createdDomains,
          ),
        () => plain("GET", `/domains/${domain()}/instructions`),
        () => {
          const name = domainName(context, random);
          return plain(
            "DELETE",
            `/domains/${pathSegment(protectedDomain(name) ? `${name}x` : name)}`,
          );
        },
        () => plain("GET", "/domains"),
        () => plain("GET", `/check/${domain()}`, CHECK_DOCUMENTED),
        () =>
          remembering(
            json("POST", "/clients", {
              name: hostileString(random, 300),
              domains: [
                context.senderDomain,
                ...(random.chance(0.5) ? [domainName(context, random)] : []),
              ],
            }),
            /"client_id":"(cli_[0-9a-f]{16})"/,
            context.createdClients,
          ),
        () => plain("GET", `/clients/${client()}`),
        () => json("PATCH", `/clients/${client()}`, { active: random.chance(0.5) }),
        () =>
          json("PUT", `/clients/${client()}/domains`, { domains: [domainName(context, random)] }),
        () => plain("POST", `/clients/${client()}/rotate`),
        () => plain("DELETE", `/clients/${client()}`),
        () => plain("GET", "/clients"),
        () =>
          json(
            "PUT",
            "/ratelimit",
            {
              api_rate_per_min: random.chance(0.5) ? hostileNumber(random) : 1000,
              send_delay_secs: random.chance(0.5) ? hostileNumber(random) : 0,
              default_domain_limits: {
                per_hour: hostileNumber(random),
                per_day: hostileNumber(random),
              },
              domains: {
                [random.chance(0.5) ? context.senderDomain : domainName(context, random)]: {
                  per_hour: hostileNumber(random),
                  per_day: 0,
                },
              },
            },
            restore,
          ),
        () =>
          json(
            "PUT",
            "/allowlist",
            { allowlist: Array.from({ length: random.size(50) }, () => cidr(random)) },
            restore,
          ),
        () => plain("GET", "/ratelimit"),
        () => plain("GET", "/allowlist"),
        () =>
          plain(
            "GET",
            `/queue${hostileQuery(random, ["estado", "limite", "message_id", "to", "desde", "ate"])}`,
          ),
        () => plain("POST", "/queue/tick"),
        () => plain("GET", "/openapi.json"),
        () =>
          plain(
            random.pick(["PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE", "PROPFIND"]),
            random.pick(
              ["/domains", "/clients", "/send", "/health", `/${hostileString(random, 200)}`].map(
                (p) =>
                  p.startsWith("/") && p.length > 1 && !/^\/[a-z-]+$/.test(p)
                    ? `/${pathSegment(p.slice(1))}`
                    : p,
              ),
            ),
          ),
      ];
      return random.pick(calls)();
    },
  };
}
