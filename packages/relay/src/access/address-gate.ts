import {
  type AddressRange,
  type IpAddress,
  inAnyRange,
  parseAddressRange,
} from "../addresses/ip-range.js";
import type { ApiThrottle } from "./api-throttle.js";
import { clientAddress } from "./client-address.js";

/** What the gate reads of the live configuration (frozen snapshots, replaced on change). */
export interface AddressGateSettings {
  readonly allowlist: readonly string[];
  readonly trusted_proxies: readonly string[];
}

export type GateVerdict =
  | { admitted: true }
  | { admitted: false; reason: "forbidden" }
  | { admitted: false; reason: "rate_limited"; retryAfterSecs: number };

/**
 * The edge every entry point passes before any credential is looked at (an HTTP request, an
 * SMTP connection, an SMTP AUTH): the allowlist, then one count against the per-IP throttle,
 * both read from the configuration in force at that moment. HTTP runs the two steps as hooks of
 * the request guard (the count through `@fastify/rate-limit`); the SMTP port calls `admit`.
 */
export interface AddressGate {
  /** The HTTP client: the TCP peer, or what a trusted proxy forwarded (`client-address.ts`). */
  clientAddress(peer: string, forwardedFor: string | string[] | undefined): IpAddress | undefined;
  /** Whether the allowlist admits `address`; an empty list admits every caller, even unknown. */
  allows(address: IpAddress | undefined): boolean;
  /** `allows`, then one count against the address's throttle window (in Redis when shared). */
  admit(address: IpAddress | undefined): Promise<GateVerdict>;
}

export function createAddressGate(
  settings: () => AddressGateSettings,
  throttle: ApiThrottle,
): AddressGate {
  // The lists are frozen snapshots of the configuration: parse each list once.
  const rangesCache = new WeakMap<readonly string[], AddressRange[]>();
  const ranges = (entries: readonly string[]) => {
    let parsed = rangesCache.get(entries);
    if (!parsed) {
      parsed = entries.map(parseAddressRange);
      rangesCache.set(entries, parsed);
    }
    return parsed;
  };

  const allows = (address: IpAddress | undefined) => {
    const { allowlist } = settings();
    return (
      allowlist.length === 0 || (address !== undefined && inAnyRange(ranges(allowlist), address))
    );
  };

  return {
    clientAddress: (peer, forwardedFor) =>
      clientAddress(peer, forwardedFor, ranges(settings().trusted_proxies)),
    allows,
    async admit(address) {
      if (!allows(address)) return { admitted: false, reason: "forbidden" };
      // An address that cannot be read (no peer) is not counted: there is no key to count it by.
      if (!address) return { admitted: true };
      const verdict = await throttle.check(address);
      return verdict.allowed
        ? { admitted: true }
        : { admitted: false, reason: "rate_limited", retryAfterSecs: verdict.retryAfterSecs };
    },
  };
}
