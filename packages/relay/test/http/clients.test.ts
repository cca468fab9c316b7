import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestRelay } from "../helpers/relay-harness.js";

const CLIENT_ID = /^cli_[0-9a-f]{16}$/;
const SECRET = /^[0-9a-f]{48}$/;

describe("client management", () => {
  let relay: TestRelay;
  beforeAll(async () => {
    relay = await TestRelay.start();
    await relay.admin("POST", "/domains", { domain: "one.test" });
    await relay.admin("POST", "/domains", { domain: "two.test" });
  });
  afterAll(() => relay.close());

  const create = (name = "shop", domains = ["one.test"]) =>
    relay.admin("POST", "/clients", { name, domains });

  it("creates an active client and shows its secret once, with an aviso", async () => {
    const response = await create("shop", ["one.test", "ONE.test"]);
    expect(response.statusCode).toBe(201);
    const body = response.json();
    expect(body).toMatchObject({ name: "shop", domains: ["one.test"], active: true });
    expect(body.client_id).toMatch(CLIENT_ID);
    expect(body.secret).toMatch(SECRET);
    expect(body.aviso).toMatch(/only once/);
    expect(new Date(body.created_at).toISOString()).toBe(body.created_at);

    const read = await relay.admin("GET", `/clients/${body.client_id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual({
      client_id: body.client_id,
      name: "shop",
      domains: ["one.test"],
      active: true,
      created_at: body.created_at,
    });
  });

  it("stores the secret as a bcrypt hash of cost 10 or more", async () => {
    const { client_id, secret } = (await create()).json();
    const row = relay.relay.db
      .prepare("SELECT secret_hash FROM clients WHERE client_id = ?")
      .get(client_id) as { secret_hash: string };
    expect(row.secret_hash).not.toContain(secret);
    const cost = Number(/^\$2[aby]\$(\d\d)\$/.exec(row.secret_hash)?.[1]);
    expect(cost).toBeGreaterThanOrEqual(10);
  });

  it("refuses an empty name, an unconfigured domain, wrong types and unknown fields with 400", async () => {
    for (const body of [
      { name: "   ", domains: [] },
      { name: "x", domains: ["nowhere.test"] },
      { name: 7, domains: [] },
      { name: "x", domains: "one.test" },
      { name: "x" },
      { name: "x", domains: [], secret: "mine" },
    ]) {
      const response = await relay.admin("POST", "/clients", body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error).toMatch(/^(bad_request|unknown_domain)$/);
    }
  });

  it("lists clients without secrets or hashes", async () => {
    const { client_id } = (await create("listed")).json();
    const response = await relay.admin("GET", "/clients");
    expect(response.statusCode).toBe(200);
    const listed = response.json().clients;
    expect(listed.find((client: { client_id: string }) => client.client_id === client_id)).toEqual(
      expect.objectContaining({ name: "listed" }),
    );
    expect(response.body).not.toMatch(/secret|\$2[aby]\$/);
  });

  it("answers 404 not_found for an unknown client on every per-client endpoint", async () => {
    const id = "cli_0000000000000000";
    for (const [method, url, payload] of [
      ["GET", `/clients/${id}`, undefined],
      ["POST", `/clients/${id}/rotate`, undefined],
      ["PUT", `/clients/${id}/domains`, { domains: [] }],
      ["PATCH", `/clients/${id}`, { active: false }],
      ["DELETE", `/clients/${id}`, undefined],
    ] as const) {
      const response = await relay.admin(method, url, payload);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json().error).toBe("not_found");
    }
  });

  it("rotates a secret: a new one is shown, the stored hash changes", async () => {
    const { client_id, secret } = (await create()).json();
    const response = await relay.admin("POST", `/clients/${client_id}/rotate`);
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(["aviso", "client_id", "secret"]);
    expect(body.client_id).toBe(client_id);
    expect(body.secret).toMatch(SECRET);
    expect(body.secret).not.toBe(secret);
    expect(await relay.relay.authenticator.verify(client_id, secret)).toBeUndefined();
    expect((await relay.relay.authenticator.verify(client_id, body.secret))?.client_id).toBe(
      client_id,
    );
  });

  it("replaces the domain list (empty allowed), refusing unconfigured domains", async () => {
    const { client_id } = (await create()).json();
    const replaced = await relay.admin("PUT", `/clients/${client_id}/domains`, {
      domains: ["two.test"],
    });
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json()).toMatchObject({ client_id, domains: ["two.test"] });
    expect(replaced.body).not.toContain("secret");

    const empty = await relay.admin("PUT", `/clients/${client_id}/domains`, { domains: [] });
    expect(empty.json().domains).toEqual([]);

    const bad = await relay.admin("PUT", `/clients/${client_id}/domains`, {
      domains: ["one.test", "nowhere.test"],
    });
    expect(bad.statusCode).toBe(400);
    expect((await relay.admin("GET", `/clients/${client_id}`)).json().domains).toEqual([]);

    const wrongType = await relay.admin("PUT", `/clients/${client_id}/domains`, { domains: [1] });
    expect(wrongType.statusCode).toBe(400);
  });

  it("disables and enables a client with PATCH; active must be a boolean", async () => {
    const { client_id } = (await create()).json();
    const off = await relay.admin("PATCH", `/clients/${client_id}`, { active: false });
    expect(off.statusCode).toBe(200);
    expect(off.json()).toMatchObject({ client_id, active: false });
    const on = await relay.admin("PATCH", `/clients/${client_id}`, { active: true });
    expect(on.json().active).toBe(true);
    for (const body of [{}, { active: "false" }, { active: 0 }, { active: true, name: "x" }]) {
      const response = await relay.admin("PATCH", `/clients/${client_id}`, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().error).toBe("bad_request");
    }
  });

  it("deletes a client", async () => {
    const { client_id } = (await create()).json();
    const response = await relay.admin("DELETE", `/clients/${client_id}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true });
    expect((await relay.admin("GET", `/clients/${client_id}`)).statusCode).toBe(404);
  });

  it("requires the admin token; a client credential is not an admin credential", async () => {
    const { client_id, secret } = (await create()).json();
    const basic = `Basic ${Buffer.from(`${client_id}:${secret}`).toString("base64")}`;
    for (const headers of [{}, { "x-auth-token": "nope" }, { authorization: basic }]) {
      const response = await relay.app.inject({ method: "GET", url: "/clients", headers });
      expect(response.statusCode).toBe(401);
      expect(response.json().error).toBe("unauthorized");
    }
  });
});
