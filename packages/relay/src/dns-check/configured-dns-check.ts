import { hostname, networkInterfaces } from "node:os";
import type { ConfigStore } from "../config/config-store.js";
import type { DnsResolver } from "../dns/dns-resolver.js";
import type { DnsCheckReport } from "./check-result.js";
import { runDnsCheck } from "./dns-check-service.js";
import { resolvePublicIp } from "./public-ip.js";

/** The DNS validation of the live configuration, shared by `GET /check` and `relay check`. */
export interface DnsCheck {
  /** Checks every domain, or only `domain` (throws `not_found` when it is not configured). */
  run(domain?: string): Promise<DnsCheckReport>;
}

export interface DnsCheckAdapters {
  readonly store: ConfigStore;
  readonly resolver: DnsResolver;
  /** The machine's interfaces, read at each check (addresses may change while running). */
  readonly interfaces?: typeof networkInterfaces;
}

export function createDnsCheck({
  store,
  resolver,
  interfaces = networkInterfaces,
}: DnsCheckAdapters): DnsCheck {
  return {
    run(domain) {
      const config = store.current();
      const deps = {
        resolver,
        publicIp: resolvePublicIp(config.public_ip, interfaces()),
        helo: config.helo_hostname ?? hostname(),
        activate: (names: readonly string[]) =>
          store.update((file) => {
            // NOTE: re-read inside the update: the domain may have been removed or changed
            // by a concurrent request while its DNS was being checked.
            for (const name of names) {
              const entry = file.domains?.[name];
              if (entry?.status === "pending") entry.status = "active";
            }
          }),
      };
      return runDnsCheck(deps, config.domains, domain);
    },
  };
}
