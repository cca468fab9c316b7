import type { ClientRecord, ClientRepository } from "../state/client-repository.js";
import { raiseCounter, type SharedDb, type SharedSchema } from "./shared-database.js";

/** The clients of the shared database, with what keeps every instance's copy current. */
export interface SharedClients extends ClientRepository {
  /** Reads every client again when `version` differs from the one last read. */
  refresh(version: number): Promise<void>;
}

type ClientRow = SharedSchema["relay_clients"];

const toRecord = (row: ClientRow): ClientRecord => ({
  client_id: row.client_id,
  name: row.name,
  domains: JSON.parse(row.domains) as string[],
  active: Number(row.active) === 1,
  secret_hash: row.secret_hash,
  created_at: row.created_at,
});

/**
 * Clients in the shared database. Reads come from an in-memory copy (the credential check of
 * every request stays synchronous and costs no round trip); a change is written to the
 * database, with the `clients_version` counter raised in the same transaction, before it is
 * answered, and applied to the copy at once. The other instances see the counter move at their
 * next refresh (every `SHARED_REFRESH_MS`) and read the clients again, so a disabled, deleted
 * or rotated client is refused everywhere within that period: the authenticator's cache is
 * checked against this copy at every use.
 */
export async function createSharedClients(db: SharedDb): Promise<SharedClients> {
  let clients = new Map<string, ClientRecord>();
  let version = -1;

  async function load(next: number) {
    const rows = await db.selectFrom("relay_clients").selectAll().execute();
    clients = new Map(rows.map((row) => [row.client_id, toRecord(row)]));
    version = next;
  }

  /** Runs `change` and raises the counter in one transaction; true when a row was touched. */
  async function write(change: (trx: SharedDb) => Promise<{ numAffectedRows?: bigint }>) {
    return db.transaction().execute(async (trx) => {
      const result = await change(trx);
      const touched = Number(result.numAffectedRows ?? 0) > 0;
      if (touched) {
        await raiseCounter(trx, "clients_version");
      }
      return touched;
    });
  }

  const update = async (
    clientId: string,
    set: Partial<ClientRow>,
    apply: Partial<ClientRecord>,
  ) => {
    const touched = await write((trx) =>
      trx
        .updateTable("relay_clients")
        .set(set)
        .where("client_id", "=", clientId)
        .executeTakeFirst()
        .then((r) => ({ numAffectedRows: r.numUpdatedRows })),
    );
    const known = clients.get(clientId);
    // NOTE: MySQL counts a row set to the values it already had as not affected; it exists.
    if (known) clients.set(clientId, { ...known, ...apply });
    return touched || known !== undefined;
  };

  const initial = await db
    .selectFrom("relay_shared")
    .select("clients_version")
    .where("id", "=", 1)
    .executeTakeFirstOrThrow();
  await load(Number(initial.clients_version));

  return {
    list: () =>
      [...clients.values()].sort(
        (a, b) =>
          a.created_at.localeCompare(b.created_at) || a.client_id.localeCompare(b.client_id),
      ),
    find: (clientId) => clients.get(clientId),
    async insert(client) {
      await write((trx) =>
        trx
          .insertInto("relay_clients")
          .values({
            ...client,
            domains: JSON.stringify(client.domains),
            active: client.active ? 1 : 0,
          })
          .executeTakeFirst()
          .then((r) => ({ numAffectedRows: r.numInsertedOrUpdatedRows })),
      );
      clients.set(client.client_id, client);
    },
    setSecretHash: (clientId, secretHash) =>
      update(clientId, { secret_hash: secretHash }, { secret_hash: secretHash }),
    setDomains: (clientId, domains) =>
      update(clientId, { domains: JSON.stringify(domains) }, { domains: [...domains] }),
    setActive: (clientId, active) => update(clientId, { active: active ? 1 : 0 }, { active }),
    async delete(clientId) {
      const touched = await write((trx) =>
        trx
          .deleteFrom("relay_clients")
          .where("client_id", "=", clientId)
          .executeTakeFirst()
          .then((r) => ({ numAffectedRows: r.numDeletedRows })),
      );
      clients.delete(clientId);
      return touched;
    },
    async refresh(next) {
      if (next !== version) await load(next);
    },
  };
}
