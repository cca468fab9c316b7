import { type Static, Type } from "@rd/common/typebox";
import { normalizeDomainName } from "../addresses/domain-name.js";
import { type IpAddress, inAnyRange, parseAddressRange } from "../addresses/ip-range.js";
import type { ConfigStore } from "../config/config-store.js";
import {
  ApiRatePerMinSchema,
  type Limits,
  LimitsSchema,
  SendDelaySecsSchema,
} from "../config/schema.js";
import { Errors } from "../errors.js";

// The configuration file's own field schemas: a value the API accepts always loads at boot.

/** The rate-limit settings object of the specification; `per_domain` only when one exists. */
export const RateLimitSettingsSchema = Type.Object({
  api_rate_per_min: ApiRatePerMinSchema,
  send_delay_secs: SendDelaySecsSchema,
  default_domain_limits: LimitsSchema,
  per_domain: Type.Optional(Type.Record(Type.String(), LimitsSchema)),
});
export type RateLimitSettings = Static<typeof RateLimitSettingsSchema>;

/** A change of some settings; the listed domains' overrides are replaced, the others kept. */
export const RateLimitChangeSchema = Type.Object(
  {
    api_rate_per_min: Type.Optional(ApiRatePerMinSchema),
    send_delay_secs: Type.Optional(SendDelaySecsSchema),
    default_domain_limits: Type.Optional(LimitsSchema),
    domains: Type.Optional(Type.Record(Type.String(), LimitsSchema)),
  },
  { additionalProperties: false },
);
export type RateLimitChange = Static<typeof RateLimitChangeSchema>;

/** Reads and changes the limits and the allowlist; every change is written to the config file. */
export interface AccessSettings {
  rateLimits(): RateLimitSettings;
  changeRateLimits(change: RateLimitChange): Promise<void>;
  allowlist(): string[];
  /**
   * Validates every entry (saved normalised: IPv4-mapped entries in IPv4 form), then replaces
   * the whole list; refuses a non-empty list that would turn away `caller`, who makes the change.
   */
  replaceAllowlist(entries: readonly string[], caller: IpAddress | undefined): Promise<void>;
}

export function createAccessSettings(config: ConfigStore): AccessSettings {
  return {
    rateLimits() {
      const current = config.current();
      const perDomain: Record<string, Limits> = {};
      for (const [domain, entry] of Object.entries(current.domains)) {
        if (entry.limits) perDomain[domain] = { ...entry.limits };
      }
      return {
        api_rate_per_min: current.api_rate_per_min,
        send_delay_secs: current.send_delay_secs,
        default_domain_limits: { ...current.default_domain_limits },
        ...(Object.keys(perDomain).length > 0 && { per_domain: perDomain }),
      };
    },

    async changeRateLimits(change) {
      const overrides = Object.entries(change.domains ?? {}).map(([domain, limits]) => {
        const name = normalizeDomainName(domain);
        if (!name) throw Errors.badDomain(`"${domain}" is not a valid domain name`);
        return [name, limits] as const;
      });
      await config.update((file) => {
        if (change.api_rate_per_min !== undefined) file.api_rate_per_min = change.api_rate_per_min;
        if (change.send_delay_secs !== undefined) file.send_delay_secs = change.send_delay_secs;
        if (change.default_domain_limits) file.default_domain_limits = change.default_domain_limits;
        for (const [name, limits] of overrides) {
          const entry = file.domains?.[name];
          if (!entry) throw Errors.unknownDomain(`domain ${name} is not configured`);
          entry.limits = { ...limits };
        }
      });
    },

    allowlist: () => [...config.current().allowlist],

    async replaceAllowlist(entries, caller) {
      const ranges = entries.map((entry) => {
        try {
          return parseAddressRange(entry);
        } catch {
          throw Errors.badCidr(`"${entry}" is not an IP address or CIDR block`, { entry });
        }
      });
      // The next request of this very caller would be refused: only an edit of the file could
      // undo that. An empty list (open to all) is always accepted: it is the recovery.
      if (ranges.length > 0 && !(caller && inAnyRange(ranges, caller))) {
        const who = caller ? `your address ${caller.toString()}` : "your address (unknown)";
        throw Errors.selfLockout(
          `the new allowlist does not admit ${who}, so it would refuse the caller saving it: add that address, or send an empty list to admit every address`,
          { address: caller?.toString() ?? null },
        );
      }
      await config.update((file) => {
        file.allowlist = ranges.map((range) => range.normalized);
      });
    },
  };
}
