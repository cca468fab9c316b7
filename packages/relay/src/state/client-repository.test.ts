import { describe, expect, it } from "vitest";
import { useScratchState } from "../../test/helpers/scratch-state.js";
import { createClientRepository } from "./client-repository.js";

const state = useScratchState("relay-clients-");

const client = {
  client_id: "cli_0123456789abcdef",
  name: "shop",
  domains: ["shop.test"],
  active: true,
  secret_hash: "$2b$04$first",
  created_at: "2026-11-30T00:00:00Z",
};

describe("client repository", () => {
  it("finds a client as its last change left it, whichever change that was", async () => {
    const clients = createClientRepository(state.db);
    expect(clients.find(client.client_id)).toBeUndefined();
    await clients.insert(client);
    expect(clients.find(client.client_id)).toEqual(client);

    expect(await clients.setDomains(client.client_id, ["shop.test", "news.test"])).toBe(true);
    expect(clients.find(client.client_id)?.domains).toEqual(["shop.test", "news.test"]);
    expect(await clients.setSecretHash(client.client_id, "$2b$04$second")).toBe(true);
    expect(clients.find(client.client_id)?.secret_hash).toBe("$2b$04$second");
    expect(await clients.setActive(client.client_id, false)).toBe(true);
    expect(clients.find(client.client_id)?.active).toBe(false);
    expect(await clients.delete(client.client_id)).toBe(true);
    expect(clients.find(client.client_id)).toBeUndefined();
    expect(await clients.setActive(client.client_id, true)).toBe(false);
  });

  it("reads the rows a previous run stored", async () => {
    await createClientRepository(state.db).insert(client);
    expect(createClientRepository(state.db).find(client.client_id)).toEqual(client);
  });
});
