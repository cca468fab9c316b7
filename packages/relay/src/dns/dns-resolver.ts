import { Resolver } from "node:dns/promises";

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
 * A resolver that asks `server` (checked by `parseDnsServer`, `addresses/host-port.ts`), or the
 * system's resolvers.
 */
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
