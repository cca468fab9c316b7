import { type Logger, withRequest } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import { isValidSelector, normalizeDomainName } from "../addresses/domain-name.js";
import type { ConfigStore } from "../config/config-store.js";
import { DEFAULTS, LimitsSchema, type RelayConfig } from "../config/schema.js";
import { buildDnsKit, type DnsKit } from "../dkim/dns-kit.js";
import { readPrivateKeyFile, removePrivateKeyFile, writePrivateKeyFile } from "../dkim/key-file.js";
import { generateDkimPrivateKey, spkiPublicKeyBase64 } from "../dkim/key-pair.js";
import { Errors } from "../errors.js";

/** A domain as `GET /domains` lists it; `limits` are the ones in force (override or default). */
export const DomainViewSchema = Type.Object({
  domain: Type.String(),
  status: Type.Union([Type.Literal("pending"), Type.Literal("active")]),
  selector: Type.String(),
  limits: LimitsSchema,
});
export type DomainView = Static<typeof DomainViewSchema>;

export interface DomainService {
  /**
   * Registers a `pending` domain with a new RSA-2048 key; returns its DNS kit. `requestId`, here
   * and in `remove`: the HTTP request, on the lines written for it.
   */
  add(domain: string, selector?: string, requestId?: string): Promise<DnsKit>;
  list(): DomainView[];
  instructions(domain: string): Promise<DnsKit>;
  /** Removes the domain, its limits (configuration rewritten) and its key file. */
  remove(domain: string, requestId?: string): Promise<void>;
}

export interface DomainServiceDeps {
  config: ConfigStore;
  /** Named in SPF `include:` when `helo_hostname` is unset. */
  machineHostname: string;
  logger: Logger;
}

export function createDomainService(deps: DomainServiceDeps): DomainService {
  const { config } = deps;

  const kitFor = async (current: RelayConfig, domain: string): Promise<DnsKit> => {
    const entry = current.domains[domain];
    if (!entry) throw Errors.notFound(`domain ${domain} is not configured`);
    const publicKey = spkiPublicKeyBase64(await readPrivateKeyFile(entry.key_path));
    return buildDnsKit({
      domain,
      selector: entry.selector,
      publicKey,
      relayHost: current.helo_hostname ?? deps.machineHostname,
      dmarcRua: current.dmarc_rua ?? `dmarc@${domain}`,
    });
  };

  /** The configured name `value` designates; anything that is not a host name is none. */
  const configuredName = (value: string): string => {
    const name = normalizeDomainName(value);
    if (!name) throw Errors.notFound(`domain ${value} is not configured`);
    return name;
  };

  return {
    async add(rawDomain, rawSelector, requestId) {
      const domain = normalizeDomainName(rawDomain);
      if (!domain) throw Errors.badDomain(`"${rawDomain}" is not a valid domain name`);
      const selector = (rawSelector ?? DEFAULTS.selector).trim().toLowerCase();
      if (!isValidSelector(selector))
        throw Errors.badRequest(`"${rawSelector}" is not a valid selector`);
      if (config.current().domains[domain]) throw Errors.exists(`domain ${domain} already exists`);

      let keyPath: string;
      try {
        const pem = await generateDkimPrivateKey();
        keyPath = await writePrivateKeyFile(config.current().kits_dir, domain, selector, pem);
      } catch (error) {
        deps.logger.error(
          "DKIM key could not be written",
          withRequest({ domain, error: String(error) }, requestId),
        );
        throw Errors.persistFailed("the DKIM key could not be written");
      }
      try {
        await config.update((file) => {
          if (file.domains && Object.hasOwn(file.domains, domain)) {
            throw Errors.exists(`domain ${domain} already exists`);
          }
          file.domains = {
            ...file.domains,
            [domain]: { selector, key_path: keyPath, status: "pending" },
          };
        });
      } catch (error) {
        await removePrivateKeyFile(keyPath);
        throw error;
      }
      return kitFor(config.current(), domain);
    },

    list() {
      const current = config.current();
      return Object.entries(current.domains)
        .map(([domain, entry]) => ({
          domain,
          status: entry.status,
          selector: entry.selector,
          limits: { ...(entry.limits ?? current.default_domain_limits) },
        }))
        .sort((a, b) => a.domain.localeCompare(b.domain));
    },

    async instructions(domain) {
      return kitFor(config.current(), configuredName(domain));
    },

    async remove(rawDomain, requestId) {
      const domain = configuredName(rawDomain);
      const keyPath = await config.update((file) => {
        // NOTE: the file's records are plain objects: only an own key is a configured domain.
        const entry =
          file.domains && Object.hasOwn(file.domains, domain) ? file.domains[domain] : undefined;
        if (!file.domains || !entry) throw Errors.notFound(`domain ${domain} is not configured`);
        delete file.domains[domain];
        return entry.key_path;
      });
      try {
        await removePrivateKeyFile(keyPath);
      } catch (error) {
        // The domain is gone from the configuration; a stray key file is only litter.
        deps.logger.warn(
          "DKIM key file could not be removed",
          withRequest({ path: keyPath, error: String(error) }, requestId),
        );
      }
    },
  };
}
