import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";

/** Record types the relay asks for (MX resolution and DKIM/SPF/DMARC checks). */
export type RecordType = "A" | "AAAA" | "MX" | "TXT";

/**
 * The relay's one way to ask DNS. Delivery (MX) and validation (mailauth's `resolver`
 * option) both go through it, so `RELAY_DNS` applies everywhere.
 * Errors are Node's DNS errors: `code` `ENOTFOUND` for NXDOMAIN, `ENODATA` for no records.
 */
export interface DnsResolver {
  resolveMx(name: string): Promise<Array<{ exchange: string; priority: number }>>;
  resolve4(name: string): Promise<string[]>;
  resolve6(name: string): Promise<string[]>;
  resolveTxt(name: string): Promise<string[][]>;
  /** mailauth's resolver signature: `(name, rrtype) => dns.resolve(name, rrtype)`. */
  resolve(name: string, rrtype: string): Promise<unknown>;
}

/**
 * Checks a `RELAY_DNS` value: an IP address, optionally with a port (`10.0.0.2`, `10.0.0.2:5353`,
 * `[::1]:5353`). Returns the form the resolver takes, or throws a message naming the problem.
 */
export function parseDnsServer(value: string): string {
  const trimmed = value.trim();
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(trimmed);
  const hostPort = /^([^:]+):(\d+)$/.exec(trimmed);
  const [host, port] = bracketed
    ? [bracketed[1] ?? "", bracketed[2]]
    : hostPort
      ? [hostPort[1] ?? "", hostPort[2]]
      : [trimmed, undefined];
  if (isIP(host) === 0) throw new Error(`"${value}" is not an IP address (optionally with :port)`);
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) {
    throw new Error(`"${value}" has a port outside 1-65535`);
  }
  if (port === undefined) return host;
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

/** A resolver that asks `server` (a value checked by `parseDnsServer`), or the system's resolvers. */
export function createDnsResolver(server?: string, timeoutMs = 5000): DnsResolver {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (server) resolver.setServers([server]);
  return {
    resolveMx: (name) => resolver.resolveMx(name),
    resolve4: (name) => resolver.resolve4(name),
    resolve6: (name) => resolver.resolve6(name),
    resolveTxt: (name) => resolver.resolveTxt(name),
    resolve: (name, rrtype) => resolver.resolve(name, rrtype),
  };
}
