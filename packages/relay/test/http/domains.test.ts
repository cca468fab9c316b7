import { createPrivateKey, createPublicKey } from "node:crypto";
import { mkdir, rename, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TestRelay } from "../helpers/relay-harness.js";

describe("domain management", () => {
  let relay: TestRelay;
  beforeEach(async () => {
    relay = await TestRelay.start({ config: { helo_hostname: "mx.relay.test" } });
  });
  afterEach(() => relay.close());

  it("registers a domain as pending with an RSA-2048 key (mode 0600) and answers its DNS kit", async () => {
    const response = await relay.admin("POST", "/domains", { domain: "Mail.Example.test" });
    expect(response.statusCode).toBe(201);
    const kit = response.json();
    expect(kit).toMatchObject({
      domain: "mail.example.test",
      selector: "relay",
      dkim: { host: "relay._domainkey.mail.example.test", type: "TXT" },
      spf: { host: "mail.example.test", type: "TXT", value: "v=spf1 include:mx.relay.test -all" },
      dmarc: {
        host: "_dmarc.mail.example.test",
        type: "TXT",
        value: "v=DMARC1; p=none; rua=mailto:dmarc@mail.example.test",
      },
    });
    expect(kit.note).toContain("pending");

    const entry = (await relay.configFile()).domains?.["mail.example.test"];
    expect(entry).toMatchObject({ selector: "relay", status: "pending" });
    expect(entry?.key_path.startsWith(`${relay.dir}/keys/`)).toBe(true);
    expect((await stat(entry?.key_path ?? "")).mode & 0o777).toBe(0o600);

    const { readFile } = await import("node:fs/promises");
    const privateKey = createPrivateKey(await readFile(entry?.key_path ?? "", "utf8"));
    expect(privateKey.asymmetricKeyDetails?.modulusLength).toBe(2048);
    const spki = createPublicKey(privateKey)
      .export({ type: "spki", format: "der" })
      .toString("base64");
    expect(kit.dkim.value).toBe(`v=DKIM1; k=rsa; p=${spki}`);
  });

  it("takes a custom selector and uses dmarc_rua when configured", async () => {
    await relay.close();
    relay = await TestRelay.start({ config: { dmarc_rua: "reports@ops.test" } });
    const response = await relay.admin("POST", "/domains", { domain: "a.test", selector: "s2026" });
    expect(response.statusCode).toBe(201);
    expect(response.json().dkim.host).toBe("s2026._domainkey.a.test");
    expect(response.json().dmarc.value).toBe("v=DMARC1; p=none; rua=mailto:reports@ops.test");
  });

  it.each([
    ["missing", {}],
    ["not a string", { domain: 42 }],
    ["without a dot", { domain: "localhost" }],
    ["with a space", { domain: "bad domain.test" }],
    ["with an underscore", { domain: "bad_domain.test" }],
    ["with a leading hyphen label", { domain: "-bad.test" }],
    ["empty", { domain: "" }],
    ["longer than 253 characters", { domain: `${"a".repeat(60)}.`.repeat(5).concat("test") }],
    ["with a label over 63 characters", { domain: `${"a".repeat(64)}.test` }],
  ])("refuses a domain name %s with 400 bad_domain", async (_case, body) => {
    const response = await relay.admin("POST", "/domains", body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error).toBe("bad_domain");
    expect((await relay.configFile()).domains ?? {}).toEqual({});
  });

  it("refuses an unknown field and a bad selector with 400", async () => {
    const unknown = await relay.admin("POST", "/domains", { domain: "a.test", color: "red" });
    expect(unknown.statusCode).toBe(400);
    const selector = await relay.admin("POST", "/domains", {
      domain: "a.test",
      selector: "no way",
    });
    expect(selector.statusCode).toBe(400);
    expect(selector.json().error).toBe("bad_request");
  });

  it("answers 409 exists for a domain already registered, whatever its case", async () => {
    expect((await relay.admin("POST", "/domains", { domain: "dup.test" })).statusCode).toBe(201);
    const again = await relay.admin("POST", "/domains", { domain: "DUP.test" });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toBe("exists");
  });

  it("lists domains with status, selector and the limits in force", async () => {
    await relay.admin("POST", "/domains", { domain: "b.test" });
    await relay.admin("POST", "/domains", { domain: "a.test", selector: "k1" });
    await relay.admin("PUT", "/ratelimit", { domains: { "b.test": { per_hour: 5, per_day: 9 } } });
    const response = await relay.admin("GET", "/domains");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      domains: [
        {
          domain: "a.test",
          status: "pending",
          selector: "k1",
          limits: { per_hour: 20, per_day: 100 },
        },
        {
          domain: "b.test",
          status: "pending",
          selector: "relay",
          limits: { per_hour: 5, per_day: 9 },
        },
      ],
    });
  });

  it("re-reads the same DNS kit, or 404 not_found", async () => {
    const created = (await relay.admin("POST", "/domains", { domain: "kit.test" })).json();
    const again = await relay.admin("GET", "/domains/kit.test/instructions");
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(created);
    const missing = await relay.admin("GET", "/domains/none.test/instructions");
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toBe("not_found");
  });

  it("deletes a domain with its limits and key file, rewriting the configuration", async () => {
    await relay.admin("POST", "/domains", { domain: "gone.test" });
    await relay.admin("PUT", "/ratelimit", {
      domains: { "gone.test": { per_hour: 1, per_day: 1 } },
    });
    const keyPath = (await relay.configFile()).domains?.["gone.test"]?.key_path ?? "";
    const response = await relay.admin("DELETE", "/domains/gone.test");
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ok: true });
    expect((await relay.configFile()).domains ?? {}).toEqual({});
    await expect(stat(keyPath)).rejects.toMatchObject({ code: "ENOENT" });
    expect((await relay.admin("GET", "/ratelimit")).json().per_domain).toBeUndefined();
    // The name is free again.
    expect((await relay.admin("POST", "/domains", { domain: "gone.test" })).statusCode).toBe(201);
  });

  it.each([
    ["the default selector", undefined],
    ["a 63-character selector", "s".repeat(63)],
    ["the longest selector", `${"s".repeat(63)}.`.repeat(3).concat("s".repeat(61))],
  ])("registers, reads and deletes the longest valid domain with %s", async (_case, selector) => {
    // 253 characters in labels of 63: the longest host name there is.
    const domain = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`;
    expect(domain).toHaveLength(253);
    const created = await relay.admin("POST", "/domains", { domain, selector });
    expect(created.statusCode, created.body).toBe(201);
    const keyPath = (await relay.configFile()).domains?.[domain]?.key_path ?? "";
    expect((await stat(keyPath)).mode & 0o777).toBe(0o600);
    // Named after the domain as far as the file-name limit (255 bytes) allows.
    expect(basename(keyPath).startsWith(domain.slice(0, 63))).toBe(true);
    expect(Buffer.byteLength(basename(keyPath))).toBeLessThanOrEqual(255);

    const again = await relay.admin("GET", `/domains/${domain}/instructions`);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(created.json());
    expect((await relay.admin("DELETE", `/domains/${domain}`)).statusCode).toBe(200);
    await expect(stat(keyPath)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("reads a key file by the path the configuration records, whatever its name", async () => {
    const created = (await relay.admin("POST", "/domains", { domain: "old.test" })).json();
    const recorded = (await relay.configFile()).domains?.["old.test"]?.key_path ?? "";
    // A name of an earlier scheme (`<domain>.<selector>.pem`), in another folder.
    const oldStyle = join(relay.dir, "elsewhere", "old.test.relay.pem");
    await mkdir(dirname(oldStyle));
    await rename(recorded, oldStyle);
    const file = await relay.configFile();
    const entry = file.domains?.["old.test"];
    if (entry) entry.key_path = oldStyle;
    await writeFile(relay.env.configPath, JSON.stringify(file));
    await relay.restart();

    const kit = await relay.admin("GET", "/domains/old.test/instructions");
    expect(kit.statusCode).toBe(200);
    expect(kit.json()).toEqual(created);
    expect((await relay.admin("DELETE", "/domains/old.test")).statusCode).toBe(200);
    await expect(stat(oldStyle)).rejects.toMatchObject({ code: "ENOENT" });
  });

  it.each([
    ["a malformed percent-encoding", "%E0%A4%A"],
    ["a lone surrogate's UTF-8 bytes", "a%ED%A0%80.test"],
    ["a name longer than any domain", "a".repeat(300)],
  ])("answers 400 bad_request in the error body for %s in the path", async (_case, name) => {
    const response = await relay.admin("GET", `/domains/${name}/instructions`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: "bad_request", message: expect.any(String) });
  });

  it("answers 404 not_found when deleting an unknown domain", async () => {
    const response = await relay.admin("DELETE", "/domains/none.test");
    expect(response.statusCode).toBe(404);
    expect(response.json().error).toBe("not_found");
  });

  it("requires the admin token on every domain endpoint", async () => {
    for (const [method, url] of [
      ["POST", "/domains"],
      ["GET", "/domains"],
      ["GET", "/domains/a.test/instructions"],
      ["DELETE", "/domains/a.test"],
    ] as const) {
      const response = await relay.app.inject({
        method,
        url,
        headers: { "x-auth-token": "wrong" },
        ...(method === "POST" && { payload: { domain: "a.test" } }),
      });
      expect(response.statusCode, `${method} ${url}`).toBe(401);
      expect(response.json()).toMatchObject({ error: "unauthorized" });
    }
  });

  it("checks credentials before the body: a bad body without a token is 401", async () => {
    const response = await relay.app.inject({
      method: "POST",
      url: "/domains",
      headers: { "content-type": "application/json" },
      payload: "{not json",
    });
    expect(response.statusCode).toBe(401);
  });
});
