import type { Database } from "better-sqlite3";

/** A client row as the relay uses it. */
export interface ClientRecord {
  readonly client_id: string;
  readonly name: string;
  readonly domains: readonly string[];
  readonly active: boolean;
  readonly secret_hash: string;
  readonly created_at: string;
}

interface ClientRow {
  client_id: string;
  name: string;
  domains: string;
  active: 0 | 1;
  secret_hash: string;
  created_at: string;
}

/**
 * The clients. Methods return plain records; "not found" is `undefined`/`false`. Reads are
 * synchronous (they sit on the credential check of every request); changes are asynchronous, so
 * the shared store (`shared/shared-clients.ts`) can write them to its database before answering.
 */
export interface ClientRepository {
  insert(client: ClientRecord): Promise<void>;
  list(): ClientRecord[];
  find(clientId: string): ClientRecord | undefined;
  setSecretHash(clientId: string, secretHash: string): Promise<boolean>;
  setDomains(clientId: string, domains: readonly string[]): Promise<boolean>;
  setActive(clientId: string, active: boolean): Promise<boolean>;
  delete(clientId: string): Promise<boolean>;
}

export function createClientRepository(db: Database): ClientRepository {
  const toRecord = (row: ClientRow): ClientRecord => ({
    ...row,
    domains: JSON.parse(row.domains) as string[],
    active: row.active === 1,
  });
  const insert = db.prepare<[ClientRow]>(
    `INSERT INTO clients (client_id, name, domains, active, secret_hash, created_at)
     VALUES (@client_id, @name, @domains, @active, @secret_hash, @created_at)`,
  );
  const list = db.prepare<[], ClientRow>("SELECT * FROM clients ORDER BY created_at, client_id");
  const find = db.prepare<[string], ClientRow>("SELECT * FROM clients WHERE client_id = ?");
  const setSecret = db.prepare<[string, string]>(
    "UPDATE clients SET secret_hash = ? WHERE client_id = ?",
  );
  const setDomains = db.prepare<[string, string]>(
    "UPDATE clients SET domains = ? WHERE client_id = ?",
  );
  const setActive = db.prepare<[number, string]>(
    "UPDATE clients SET active = ? WHERE client_id = ?",
  );
  const remove = db.prepare<[string]>("DELETE FROM clients WHERE client_id = ?");
  // The rows found, kept until this repository changes them (only the relay's own process
  // writes its database): `find` sits on every request's credential check.
  const found = new Map<string, ClientRecord>();
  const changed = (clientId: string, changes: number) => {
    found.delete(clientId);
    return changes > 0;
  };

  return {
    async insert(client) {
      insert.run({
        ...client,
        domains: JSON.stringify(client.domains),
        active: client.active ? 1 : 0,
      });
    },
    list: () => list.all().map(toRecord),
    find(clientId) {
      let client = found.get(clientId);
      if (client) return client;
      const row = find.get(clientId);
      if (!row) return undefined;
      client = toRecord(row);
      found.set(clientId, client);
      return client;
    },
    setSecretHash: async (clientId, hash) =>
      changed(clientId, setSecret.run(hash, clientId).changes),
    setDomains: async (clientId, domains) =>
      changed(clientId, setDomains.run(JSON.stringify(domains), clientId).changes),
    setActive: async (clientId, active) =>
      changed(clientId, setActive.run(active ? 1 : 0, clientId).changes),
    delete: async (clientId) => changed(clientId, remove.run(clientId).changes),
  };
}
