import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SendRelay } from "../submission/send-harness.js";

interface Page {
  suppressions: Array<{
    client_id: string | null;
    address: string;
    reason: string;
    source: string;
    created_at: string;
  }>;
  next_cursor: string | null;
}

describe("GET/POST/DELETE /suppressions: each client its own list, the admin every list", () => {
  let relay: SendRelay;
  let a: { clientId: string; authorization: string };
  let b: { clientId: string; authorization: string };

  beforeAll(async () => {
    relay = await SendRelay.start();
    await relay.addDomain("shop.test");
    a = await relay.addClient(["shop.test"]);
    b = await relay.addClient(["shop.test"]);
  });
  afterAll(() => relay.close());

  const as = (
    who: { authorization: string } | "admin" | "nobody",
    method: "GET" | "POST" | "DELETE",
    url: string,
    payload?: object,
  ) => {
    if (who === "admin") return relay.relay.admin(method, url, payload);
    return relay.app.inject({
      method,
      url,
      headers: who === "nobody" ? {} : { authorization: who.authorization },
      ...(payload && { payload }),
    });
  };
  const page = async (who: { authorization: string } | "admin", url = "/suppressions") => {
    const response = await as(who, "GET", url);
    expect(response.statusCode).toBe(200);
    return response.json() as Page;
  };

  it("adds by hand (201, lower case, source manual), and a second add of the address is 200 and unchanged", async () => {
    const first = await as(a, "POST", "/suppressions", {
      address: "Zoe@Example.ORG",
      reason: "asked to stop",
    });
    expect(first.statusCode).toBe(201);
    expect(first.json()).toEqual({
      client_id: a.clientId,
      address: "zoe@example.org",
      reason: "asked to stop",
      source: "manual",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const again = await as(a, "POST", "/suppressions", { address: "zoe@example.org" });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    const defaulted = await as(a, "POST", "/suppressions", { address: "yuri@example.org" });
    expect(defaulted.json()).toMatchObject({ reason: "added manually" });
  });

  it("refuses what is not an address with 400 bad_address, and malformed bodies with 400 bad_request", async () => {
    for (const address of [
      "not-an-address",
      "a@b@",
      "Ana <ana@example.org>",
      "ana@-bad-.org",
      "",
    ]) {
      const response = await as(a, "POST", "/suppressions", { address });
      expect(response.statusCode, address).toBe(400);
      expect(response.json()).toMatchObject({ error: "bad_address" });
    }
    for (const body of [{}, { address: "x@example.org", extra: 1 }, { address: 42 }]) {
      const response = await as(a, "POST", "/suppressions", body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: "bad_request" });
    }
    const badDelete = await as(a, "DELETE", "/suppressions?address=not-an-address");
    expect(badDelete.statusCode).toBe(400);
    expect(badDelete.json()).toMatchObject({ error: "bad_address" });
    for (const query of ["limit=0", "limit=x", "cursor=abc", "unknown=1"]) {
      expect((await as(a, "GET", `/suppressions?${query}`)).statusCode, query).toBe(400);
    }
  });

  it("shows a client its own entries only; naming another client is 404", async () => {
    expect((await page(b)).suppressions).toEqual([]);
    expect((await page(a)).suppressions.map((entry) => entry.address)).toEqual([
      "yuri@example.org",
      "zoe@example.org",
    ]);
    const foreign = await as(b, "GET", `/suppressions?client_id=${a.clientId}`);
    expect(foreign.statusCode).toBe(404);
    expect(
      (await as(b, "POST", "/suppressions", { client_id: a.clientId, address: "x@y.org" }))
        .statusCode,
    ).toBe(404);
    const removeForeign = await as(b, "DELETE", "/suppressions?address=zoe%40example.org");
    expect(removeForeign.statusCode).toBe(404);
    expect((await page(a)).suppressions).toHaveLength(2);
  });

  it("lets the admin see every list, filter by client and act for a client", async () => {
    const created = await as("admin", "POST", "/suppressions", {
      client_id: b.clientId,
      address: "walt@example.org",
    });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ client_id: b.clientId, source: "manual" });
    const unknown = await as("admin", "POST", "/suppressions", {
      client_id: "cli_0000000000000000",
      address: "walt@example.org",
    });
    expect(unknown.statusCode).toBe(404);

    const all = await page("admin");
    expect(all.suppressions.map((entry) => [entry.client_id, entry.address])).toEqual([
      [b.clientId, "walt@example.org"],
      [a.clientId, "yuri@example.org"],
      [a.clientId, "zoe@example.org"],
    ]);
    const onlyB = await page("admin", `/suppressions?client_id=${b.clientId}`);
    expect(onlyB.suppressions.map((entry) => entry.address)).toEqual(["walt@example.org"]);
    expect((await page(b)).suppressions.map((entry) => entry.address)).toEqual([
      "walt@example.org",
    ]);

    const removed = await as(
      "admin",
      "DELETE",
      `/suppressions?address=walt%40example.org&client_id=${b.clientId}`,
    );
    expect(removed.statusCode).toBe(200);
    expect(removed.json()).toEqual({ ok: true });
    expect((await page(b)).suppressions).toEqual([]);
  });

  it("needs a credential: no credential is 401 on a relay with an admin token, so is a wrong secret", async () => {
    expect((await as("nobody", "GET", "/suppressions")).statusCode).toBe(401);
    const wrong = `Basic ${Buffer.from(`${a.clientId}:${"0".repeat(48)}`).toString("base64")}`;
    expect((await as({ authorization: wrong }, "GET", "/suppressions")).statusCode).toBe(401);
    const badToken = await relay.app.inject({
      method: "GET",
      url: "/suppressions",
      headers: { "x-auth-token": "wrong" },
    });
    expect(badToken.statusCode).toBe(401);
  });

  it("pages newest first with limit and cursor until next_cursor is null", async () => {
    for (let i = 0; i < 5; i++) {
      await as(a, "POST", "/suppressions", { address: `p${i}@example.org` });
    }
    const seen: string[] = [];
    let url = "/suppressions?limit=2";
    const sizes: number[] = [];
    for (;;) {
      const next = await page(a, url);
      sizes.push(next.suppressions.length);
      seen.push(...next.suppressions.map((entry) => entry.address));
      if (next.next_cursor === null) break;
      url = `/suppressions?limit=2&cursor=${next.next_cursor}`;
    }
    expect(sizes).toEqual([2, 2, 2, 1]);
    expect(seen).toEqual([
      "p4@example.org",
      "p3@example.org",
      "p2@example.org",
      "p1@example.org",
      "p0@example.org",
      "yuri@example.org",
      "zoe@example.org",
    ]);
    // Without limit: the default page holds them all, and says it is the last.
    expect((await page(a)).next_cursor).toBeNull();
  });

  it("removes by the URL-encoded address in the query, without regard to case; a second removal is 404", async () => {
    const removed = await as(a, "DELETE", "/suppressions?address=ZOE%40Example.org");
    expect(removed.statusCode).toBe(200);
    expect((await page(a)).suppressions.map((entry) => entry.address)).not.toContain(
      "zoe@example.org",
    );
    const again = await as(a, "DELETE", "/suppressions?address=zoe%40example.org");
    expect(again.statusCode).toBe(404);
    expect(again.json()).toMatchObject({ error: "not_found" });
  });

  it("takes a long address percent-encoded in the query", async () => {
    const local = `${"a".repeat(60)}{|}`;
    const address = `${local}@${"d".repeat(63)}.${"e".repeat(63)}.${"f".repeat(56)}.org`;
    expect(address.length).toBeLessThanOrEqual(254);
    expect((await as(a, "POST", "/suppressions", { address })).statusCode).toBe(201);
    const removed = await as(a, "DELETE", `/suppressions?address=${encodeURIComponent(address)}`);
    expect(removed.statusCode).toBe(200);
  });

  it("documents the three routes in the OpenAPI document", async () => {
    const document = (await relay.app.inject({ method: "GET", url: "/openapi.json" })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(document.paths["/suppressions"] ?? {}).sort()).toEqual([
      "delete",
      "get",
      "post",
    ]);
  });
});
