import { isIP } from "node:net";
import { splitHostPort } from "../addresses/host-port.js";
import type { DnsResolver } from "../dns/dns-resolver.js";
import { DeliveryError } from "./delivery-error.js";

/** One destination server for a recipient domain, in the order it should be tried. */
export interface MxHost {
  /** Host name (or IP literal) as published in DNS or written in `mx_override`. */
  readonly name: string;
  /** Set only by `mx_override` entries; delivery otherwise uses port 25. */
  readonly port?: number;
  /**
   * Addresses to connect to, resolved through the relay's DNS resolver. Absent for
   * `mx_override` names, which are connected to as written (the operating system resolves them).
   * Empty when the name has no A/AAAA record.
   */
  readonly addresses?: readonly string[];
}

/** How a host is named in ledger events and in `entregue via <host>` details. */
export function mxHostLabel(host: MxHost): string {
  if (host.port === undefined) return host.name;
  return isIP(host.name) === 6 ? `[${host.name}]:${host.port}` : `${host.name}:${host.port}`;
}

/** `mx_override` of the configuration: domain → ["host:port", …], tried in the listed order. */
export type MxOverrides = Readonly<Record<string, readonly string[]>>;

export interface MxResolverDeps {
  dns: DnsResolver;
  overrides?: MxOverrides;
  /** Source of randomness for shuffling hosts of equal preference (RFC 5321 §5.1). */
  random?: () => number;
}

export type MxResolver = (domain: string) => Promise<MxHost[]>;

/** Node's DNS error codes that mean "this name exists but has no record of that type". */
const NO_DATA = new Set(["ENODATA"]);
/** Node's DNS error codes for a name that does not exist (NXDOMAIN). */
const NO_DOMAIN = new Set(["ENOTFOUND"]);

function dnsCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null && "code" in error
    ? String((error as { code: unknown }).code)
    : undefined;
}

/** Parses an `mx_override` entry: `host:port`, `[v6]:port`, or a bare host (port 25). */
export function parseOverrideEntry(entry: string): MxHost {
  const { host: name, port } = splitHostPort(entry);
  return port === undefined ? { name } : { name, port: Number(port) };
}

/** Stable sort by preference, with each group of equal preference shuffled. */
function orderByPreference<T extends { priority: number }>(records: T[], random: () => number) {
  const groups = new Map<number, T[]>();
  for (const record of records) {
    const group = groups.get(record.priority) ?? [];
    group.push(record);
    groups.set(record.priority, group);
  }
  return [...groups.keys()]
    .sort((a, b) => a - b)
    .flatMap((priority) => {
      const group = groups.get(priority) ?? [];
      for (let i = group.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [group[i], group[j]] = [group[j] as T, group[i] as T];
      }
      return group;
    });
}

/**
 * Resolves a recipient domain to the hosts to try, best first.
 * - `mx_override` entries bypass DNS and keep their listed order.
 * - MX records are ordered by preference; equal preferences are shuffled, as RFC 5321 asks.
 * - No MX record: the domain's own A/AAAA records are the implicit MX (RFC 5321 §5.1).
 * - A null MX (RFC 7505), a domain that does not exist, or one with neither MX nor address:
 *   permanent failure. Any other DNS failure (timeout, SERVFAIL…): temporary failure.
 */
export function createMxResolver({
  dns,
  overrides = {},
  random = Math.random,
}: MxResolverDeps): MxResolver {
  const overrideByDomain = new Map(
    Object.entries(overrides).map(([domain, entries]) => [
      domain.toLowerCase(),
      entries.map(parseOverrideEntry),
    ]),
  );

  async function addressesOf(name: string): Promise<string[]> {
    if (isIP(name) !== 0) return [name];
    // NOTE: IPv4 first: many senders have no IPv6 route, and a failed v6 connect only costs time.
    const [v4, v6] = await Promise.all([
      dns.resolve4(name).catch(() => []),
      dns.resolve6(name).catch(() => []),
    ]);
    return [...v4, ...v6];
  }

  async function implicitMx(domain: string): Promise<MxHost[]> {
    const addresses = await addressesOf(domain);
    if (addresses.length === 0) {
      throw new DeliveryError(`${domain} has no MX and no A/AAAA record`, { permanent: true });
    }
    return [{ name: domain, addresses }];
  }

  return async (rawDomain) => {
    const domain = rawDomain.toLowerCase().replace(/\.$/, "");
    const override = overrideByDomain.get(domain);
    if (override) return override.map((host) => ({ ...host }));

    let records: Array<{ exchange: string; priority: number }>;
    try {
      records = await dns.resolveMx(domain);
    } catch (error) {
      const code = dnsCode(error);
      if (code && NO_DATA.has(code)) return implicitMx(domain);
      if (code && NO_DOMAIN.has(code)) {
        throw new DeliveryError(`${domain} does not exist (NXDOMAIN)`, { permanent: true });
      }
      throw new DeliveryError(`MX lookup for ${domain} failed: ${code ?? String(error)}`, {
        permanent: false,
      });
    }
    if (records.length === 0) return implicitMx(domain);
    // NOTE: Node reports the root name "." of a null MX as an empty exchange.
    if (records.some((record) => record.exchange === "" || record.exchange === ".")) {
      throw new DeliveryError(`${domain} does not accept mail (null MX)`, { permanent: true });
    }
    const ordered = orderByPreference(records, random);
    return Promise.all(
      ordered.map(async ({ exchange }) => {
        const name = exchange.toLowerCase().replace(/\.$/, "");
        return { name, addresses: await addressesOf(name) };
      }),
    );
  };
}
