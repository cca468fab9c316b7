import { readFile, stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../../src/cli.js";
import { resolveConfig } from "../../src/config/config-loader.js";
import { parseEnv } from "../../src/config/env.js";
import { TestRelay } from "../helpers/relay-harness.js";

/**
 * Names of properties every plain object inherits: a lookup keyed by one of them must find
 * nothing, never the built-in (issue 11.4).
 */
const NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];
/** The same names as the last label of a host name, and lower-cased as the relay stores them. */
const KEYS = [...new Set([...NAMES, ...NAMES.map((name) => name.toLowerCase()), "a.constructor"])];

const LIMITS = { per_hour: 1, per_day: 1 };

describe("names of built-in object properties as keys", () => {
  let relay: TestRelay;
  let clientId: string;
  beforeAll(async () => {
    // An open instance: `/send` needs no credential, so the sender domain is looked up as given.
    relay = await TestRelay.start({ env: { RELAY_AUTH_TOKEN: "" } });
    await relay.admin("POST", "/domains", { domain: "a.test" });
    clientId = (await relay.admin("POST", "/clients", { name: "c", domains: ["a.test"] })).json()
      .client_id;
  });
  afterAll(() => relay.close());

  /** The configuration file's bytes and mtime, to show a request did not rewrite it. */
  const configState = async () => ({
    text: await readFile(relay.env.configPath, "utf8"),
    mtime: (await stat(relay.env.configPath)).mtimeMs,
  });

  /** A JSON body written by hand, so that `__proto__` is an ordinary key as a client sends it. */
  const rawJson = (method: "POST" | "PUT", url: string, json: string) =>
    relay.app.inject({
      method,
      url,
      headers: { "content-type": "application/json" },
      payload: json,
    });

  it.each(KEYS)("%s: GET /domains/{domain}/instructions is 404", async (key) => {
    const response = await relay.admin("GET", `/domains/${encodeURIComponent(key)}/instructions`);
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toBe("not_found");
  });

  it.each(KEYS)("%s: DELETE /domains/{domain} is 404 and leaves the file alone", async (key) => {
    const before = await configState();
    const response = await relay.admin("DELETE", `/domains/${encodeURIComponent(key)}`);
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toBe("not_found");
    expect(await configState()).toEqual(before);
  });

  it.each(KEYS)("%s: GET /check/{domain} is 404", async (key) => {
    const response = await relay.admin("GET", `/check/${encodeURIComponent(key)}`);
    expect(response.statusCode).toBe(404);
  });

  it.each(KEYS)("%s: POST /domains refuses it, or registers it as a new domain", async (key) => {
    const response = await relay.admin("POST", "/domains", { domain: key });
    if (key.includes(".")) {
      // `a.constructor` is a valid host name: it is a domain like any other.
      expect(response.statusCode).toBe(201);
      expect((await relay.admin("DELETE", `/domains/${key}`)).statusCode).toBe(200);
    } else {
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toBe("bad_domain");
    }
  });

  it.each(KEYS)("%s: client domain lists refuse it as not configured", async (key) => {
    const created = await relay.admin("POST", "/clients", { name: "x", domains: [key] });
    expect(created.statusCode).toBe(400);
    expect(created.json().error).toBe("unknown_domain");
    const replaced = await relay.admin("PUT", `/clients/${clientId}/domains`, { domains: [key] });
    expect(replaced.statusCode).toBe(400);
    expect(replaced.json().error).toBe("unknown_domain");
  });

  it.each(KEYS)("%s: every /clients/{client_id} route is 404", async (key) => {
    const id = encodeURIComponent(key);
    for (const [method, url, body] of [
      ["GET", `/clients/${id}`, undefined],
      ["PATCH", `/clients/${id}`, { active: false }],
      ["POST", `/clients/${id}/rotate`, undefined],
      ["PUT", `/clients/${id}/domains`, { domains: ["a.test"] }],
      ["DELETE", `/clients/${id}`, undefined],
    ] as const) {
      const response = await relay.admin(method, url, body);
      expect(response.statusCode, `${method} ${url}`).toBe(404);
    }
  });

  it.each(KEYS)(
    "%s: PUT /ratelimit refuses an override for it and changes nothing",
    async (key) => {
      const before = await configState();
      const body = `{"domains":{${JSON.stringify(key)}:${JSON.stringify(LIMITS)}}}`;
      const response = await rawJson("PUT", "/ratelimit", body);
      expect(response.statusCode).toBe(400);
      expect(await configState()).toEqual(before);
      expect((await relay.admin("GET", "/ratelimit")).json().per_domain).toBeUndefined();
    },
  );

  it.each(KEYS)(
    "%s: GET /queue takes it as a filter value, and refuses it as a parameter",
    async (key) => {
      const value = encodeURIComponent(key);
      for (const filter of ["rcpt", "message_id", "client_id"]) {
        const response = await relay.admin("GET", `/queue?${filter}=${value}`);
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ queue: [] });
      }
      expect((await relay.admin("GET", `/queue?estado=${value}`)).statusCode).toBe(400);
      expect((await relay.admin("GET", `/queue?${value}=1`)).statusCode).toBe(400);
    },
  );

  it.each(KEYS)("%s: a sender domain of that name has no DKIM kit", async (key) => {
    // `/send-raw` always takes a client credential, whose domain list is checked first.
    const response = await relay.app.inject({
      method: "POST",
      url: "/send",
      payload: { from: `x@${key}`, to: ["y@a.test"], subject: "s", text: "t" },
    });
    // 400: not an address (`__proto__`) or no kit; never 403 `domain_pending` nor a 500.
    expect(response.statusCode, response.body).toBe(400);
    expect(["bad_from", "no_dkim_kit"]).toContain(response.json().error);
  });

  it("the resolved configuration finds none of them among domains or MX overrides", () => {
    const env = parseEnv({ RELAY_CONFIG: "/nowhere/relay.json" });
    const config = resolveConfig({ mx_override: { "a.test": ["127.0.0.1:25"] } }, env);
    for (const key of KEYS) {
      expect(config.domains[key]).toBeUndefined();
      expect(config.mx_override[key]).toBeUndefined();
    }
  });

  it.each(NAMES)("%s: `relay %s` is an unknown command (exit 2)", async (name) => {
    expect(await run([name])).toBe(2);
  });
});
