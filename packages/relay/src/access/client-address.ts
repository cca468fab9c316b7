import {
  type AddressRange,
  type IpAddress,
  inAnyRange,
  parseIpAddress,
} from "../addresses/ip-range.js";

/**
 * The address of the calling client. `X-Forwarded-For` counts only when the TCP peer is a
 * trusted proxy; then the rightmost address that is not itself a trusted proxy is the client
 * (entries to its left were written by the client and could be forged).
 * An unparseable hop stops the walk: the last trusted hop is taken as the client.
 */
export function clientAddress(
  peer: string,
  forwardedFor: string | string[] | undefined,
  trustedProxies: readonly AddressRange[],
): IpAddress | undefined {
  let client = parseIpAddress(peer);
  if (!client || forwardedFor === undefined || !inAnyRange(trustedProxies, client)) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(",") : forwardedFor)
    .split(",")
    .map((hop) => hop.trim())
    .filter(Boolean);
  for (let index = hops.length - 1; index >= 0; index--) {
    const hop = parseIpAddress(hops[index] ?? "");
    if (!hop) break;
    client = hop;
    if (!inAnyRange(trustedProxies, hop)) break;
  }
  return client;
}
