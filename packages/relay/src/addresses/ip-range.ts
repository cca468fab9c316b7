import ipaddr from "ipaddr.js";

type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** One allowlist or trusted-proxy entry: a single address is a range of /32 or /128. */
export interface AddressRange {
  readonly entry: string;
  /**
   * The entry as it is saved: an IPv4-mapped entry in its IPv4 form (`::ffff:192.0.2.0/120` →
   * `192.0.2.0/24`), any other as written, trimmed.
   */
  readonly normalized: string;
  contains(address: IpAddress): boolean;
}

// An IPv6 block at least this long inside `::ffff:0:0/96` holds only IPv4-mapped addresses.
const MAPPED_PREFIX_BITS = 96;

/**
 * Parses `192.0.2.7`, `192.0.2.0/24`, `2001:db8::1` or `2001:db8::/32`.
 * NOTE: ipaddr.js also accepts legacy IPv4 forms (`0x7f.1`, `127.1`); only the four-part
 * dotted decimal form is taken here, so what is saved is what an operator would read.
 */
export function parseAddressRange(entry: string): AddressRange {
  const text = entry.trim();
  let network: IpAddress;
  let bits: number;
  if (text.includes("/")) {
    if (ipaddr.IPv4.isValidCIDRFourPartDecimal(text)) [network, bits] = ipaddr.IPv4.parseCIDR(text);
    else if (ipaddr.IPv6.isValidCIDR(text)) [network, bits] = ipaddr.IPv6.parseCIDR(text);
    else throw new Error(`"${entry}" is not a valid CIDR block`);
  } else if (ipaddr.IPv4.isValidFourPartDecimal(text)) {
    network = ipaddr.IPv4.parse(text);
    bits = 32;
  } else if (ipaddr.IPv6.isValid(text)) {
    network = ipaddr.IPv6.parse(text);
    bits = 128;
  } else {
    throw new Error(`"${entry}" is not a valid IP address`);
  }
  // NOTE: peers are matched in their IPv4 form (`parseIpAddress`), so a mapped entry written in
  // IPv6 form would never match one: it is taken, and saved, as the IPv4 entry it means.
  let normalized = text;
  if (
    network instanceof ipaddr.IPv6 &&
    network.isIPv4MappedAddress() &&
    bits >= MAPPED_PREFIX_BITS
  ) {
    network = network.toIPv4Address();
    bits -= MAPPED_PREFIX_BITS;
    normalized = text.includes("/") ? `${network.toString()}/${bits}` : network.toString();
  }
  return {
    entry,
    normalized,
    contains: (address) => address.kind() === network.kind() && address.match(network, bits),
  };
}

/**
 * Parses a peer or forwarded address; an IPv4-mapped IPv6 address (`::ffff:192.0.2.7`, what a
 * dual-stack socket reports) becomes the IPv4 address. Undefined when the text is no address.
 */
export function parseIpAddress(text: string): IpAddress | undefined {
  const trimmed = text.trim();
  if (!ipaddr.isValid(trimmed)) return undefined;
  return ipaddr.process(trimmed);
}

/** Whether any of `ranges` contains `address`. */
export function inAnyRange(ranges: readonly AddressRange[], address: IpAddress): boolean {
  return ranges.some((range) => range.contains(address));
}

export type { IpAddress };
