import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDnsResolver } from "../../src/dns/dns-resolver.js";
import { checkDkim } from "../../src/dns-check/dkim-check.js";
import { type DnsServer, startDnsServer } from "../fixtures/dns-server.js";
import {
  generateDkimKey,
  publicKeyBase64,
  txtStrings,
  writeKeyFile,
} from "./dns-check-fixtures.js";

const domain = "dkim.test";
const selector = "relay";
const name = `${selector}._domainkey.${domain}`;

describe("DKIM check", () => {
  const key = generateDkimKey();
  let dns: DnsServer;
  let tmp: Awaited<ReturnType<typeof makeTempDir>>;
  let keyPath: string;

  beforeAll(async () => {
    dns = await startDnsServer();
    tmp = await makeTempDir("dkim-check-");
    keyPath = await writeKeyFile(tmp.path, domain, key.privatePem);
  });
  afterAll(async () => {
    await dns.close();
    await tmp.remove();
  });

  const check = (records: string[][] | undefined, path = keyPath) => {
    dns.setZone(records ? { [name]: { TXT: records } } : {});
    return checkDkim({ resolver: createDnsResolver(dns.address), domain, selector, keyPath: path });
  };

  it("passes when the published SPKI key, split into 255-character strings, is the local key", async () => {
    const strings = txtStrings(`v=DKIM1; k=rsa; p=${publicKeyBase64(key.publicKey)}`);
    const outcome = await check([strings]);
    const [published] = await createDnsResolver(dns.address).resolveTxt(name);
    expect(published?.length).toBeGreaterThan(1);
    expect(outcome).toEqual({ status: "pass", message: expect.stringContaining("matches") });
  });

  it("accepts folding whitespace inside p=", async () => {
    const p = publicKeyBase64(key.publicKey).replace(/(.{64})/g, "$1 ");
    expect((await check([txtStrings(`v=DKIM1; k=rsa; p=${p}`)])).status).toBe("pass");
  });

  it("fails when no record is published", async () => {
    const outcome = await check(undefined);
    expect(outcome.status).toBe("fail");
    expect(outcome.message).toContain(`no DKIM record at ${name}`);
  });

  it("fails when the record has no p= tag", async () => {
    const outcome = await check([["v=DKIM1; k=rsa"]]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("no p= tag") });
  });

  it("fails when p= is empty (a revoked key)", async () => {
    const outcome = await check([["v=DKIM1; k=rsa; p="]]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("empty p=") });
  });

  it("fails with its own message when the key is published in PKCS#1 form", async () => {
    const pkcs1 = publicKeyBase64(key.publicKey, "pkcs1");
    const outcome = await check([txtStrings(`v=DKIM1; k=rsa; p=${pkcs1}`)]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("PKCS#1") });
  });

  it("fails when the published key is another key", async () => {
    const other = generateDkimKey();
    const outcome = await check([
      txtStrings(`v=DKIM1; k=rsa; p=${publicKeyBase64(other.publicKey)}`),
    ]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("differs") });
  });

  it("fails when p= is not a key at all", async () => {
    const outcome = await check([["v=DKIM1; k=rsa; p=bm90IGEga2V5"]]);
    expect(outcome).toEqual({
      status: "fail",
      message: expect.stringContaining("not a public key"),
    });
  });

  it("fails when p= is not base64", async () => {
    const outcome = await check([["v=DKIM1; k=rsa; p=***"]]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("not base64") });
  });

  it("fails when several records answer at the selector", async () => {
    const record = txtStrings(`v=DKIM1; k=rsa; p=${publicKeyBase64(key.publicKey)}`);
    const outcome = await check([record, record]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("2 TXT records") });
  });

  it("fails on a key type other than rsa", async () => {
    const outcome = await check([["v=DKIM1; k=ed25519; p=AAAA"]]);
    expect(outcome).toEqual({ status: "fail", message: expect.stringContaining("k=ed25519") });
  });

  it("fails, naming the file, when the local key cannot be read", async () => {
    const missing = `${tmp.path}/absent.pem`;
    const outcome = await check(
      [txtStrings(`v=DKIM1; k=rsa; p=${publicKeyBase64(key.publicKey)}`)],
      missing,
    );
    expect(outcome.status).toBe("fail");
    expect(outcome.message).toContain(missing);
  });
});
