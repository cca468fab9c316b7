import type { Clock } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import { normalizeDomainName } from "../addresses/domain-name.js";
import type { ConfigStore } from "../config/config-store.js";
import { Errors } from "../errors.js";
import type { ClientRecord, ClientRepository } from "../state/client-repository.js";
import type { ClientAuthenticator } from "./client-authenticator.js";
import { hashSecret, newClientId, newSecret, SECRET_NOTICE } from "./client-secret.js";

/** A client as the API shows it: never the secret or its hash. */
export const ClientViewSchema = Type.Object({
  client_id: Type.String({ pattern: "^cli_[0-9a-f]{16}$" }),
  name: Type.String(),
  domains: Type.Array(Type.String()),
  active: Type.Boolean(),
  created_at: Type.String({ format: "date-time" }),
});
export type ClientView = Static<typeof ClientViewSchema>;

/** A new secret, in the one answer that shows it. */
export const IssuedSecretSchema = Type.Object({
  client_id: Type.String(),
  secret: Type.String({ description: "48 hex characters; shown only here" }),
  aviso: Type.String(),
});
export type IssuedSecret = Static<typeof IssuedSecretSchema>;

export interface ClientService {
  create(input: { name: string; domains: readonly string[] }): Promise<ClientView & IssuedSecret>;
  list(): ClientView[];
  get(clientId: string): ClientView;
  rotate(clientId: string): Promise<IssuedSecret>;
  replaceDomains(clientId: string, domains: readonly string[]): Promise<ClientView>;
  setActive(clientId: string, active: boolean): Promise<ClientView>;
  remove(clientId: string): Promise<void>;
}

export interface ClientServiceDeps {
  clients: ClientRepository;
  authenticator: ClientAuthenticator;
  config: ConfigStore;
  clock: Clock;
}

export function createClientService(deps: ClientServiceDeps): ClientService {
  const { clients, authenticator } = deps;

  const view = (client: ClientRecord): ClientView => ({
    client_id: client.client_id,
    name: client.name,
    domains: [...client.domains],
    active: client.active,
    created_at: client.created_at,
  });

  const existing = (clientId: string): ClientRecord => {
    const client = clients.find(clientId);
    if (!client) throw Errors.notFound(`client ${clientId} does not exist`);
    return client;
  };

  /** Lower-cased, deduplicated, each configured on the instance. */
  const checkedDomains = (domains: readonly string[]): string[] => {
    const configured = deps.config.current().domains;
    const result = new Set<string>();
    for (const domain of domains) {
      const name = normalizeDomainName(domain);
      if (!name || !configured[name]) {
        throw Errors.unknownDomain(`domain "${domain}" is not configured on this relay`);
      }
      result.add(name);
    }
    return [...result];
  };

  return {
    async create(input) {
      const name = input.name.trim();
      if (!name) throw Errors.badRequest("name must not be empty");
      const domains = checkedDomains(input.domains);
      const secret = newSecret();
      const client: ClientRecord = {
        client_id: newClientId(),
        name,
        domains,
        active: true,
        secret_hash: await hashSecret(secret),
        created_at: deps.clock.now().toISOString(),
      };
      await clients.insert(client);
      return { ...view(client), secret, aviso: SECRET_NOTICE };
    },

    list: () => clients.list().map(view),

    get: (clientId) => view(existing(clientId)),

    async rotate(clientId) {
      existing(clientId);
      const secret = newSecret();
      const hash = await hashSecret(secret);
      if (!(await clients.setSecretHash(clientId, hash)))
        throw Errors.notFound(`client ${clientId} does not exist`);
      authenticator.forget(clientId);
      return { client_id: clientId, secret, aviso: SECRET_NOTICE };
    },

    async replaceDomains(clientId, domains) {
      existing(clientId);
      await clients.setDomains(clientId, checkedDomains(domains));
      authenticator.forget(clientId);
      return view(existing(clientId));
    },

    async setActive(clientId, active) {
      existing(clientId);
      await clients.setActive(clientId, active);
      authenticator.forget(clientId);
      return view(existing(clientId));
    },

    async remove(clientId) {
      if (!(await clients.delete(clientId)))
        throw Errors.notFound(`client ${clientId} does not exist`);
      authenticator.forget(clientId);
    },
  };
}
