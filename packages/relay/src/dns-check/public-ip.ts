import type { NetworkInterfaceInfo } from "node:os";
import ipaddr from "ipaddr.js";

type Interfaces = NodeJS.Dict<NetworkInterfaceInfo[]>;

/**
 * The IP the SPF check evaluates: the configured `public_ip`, else the first global unicast
 * address among the machine's interfaces (`os.networkInterfaces()`), else null.
 */
export function resolvePublicIp(
  configured: string | undefined,
  interfaces: Interfaces,
): string | null {
  if (configured) return configured;
  for (const addresses of Object.values(interfaces)) {
    for (const { address, internal } of addresses ?? []) {
      if (!internal && isGlobalUnicast(address)) return address;
    }
  }
  return null;
}

function isGlobalUnicast(address: string): boolean {
  // NOTE: ipaddr.js names every public (non-special) range "unicast", for IPv4 and IPv6 alike.
  return ipaddr.isValid(address) && ipaddr.parse(address).range() === "unicast";
}
