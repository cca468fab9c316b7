import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { makeTempDir } from "@rd/common/test-kit";
import { type DnsServer, startDnsServer, type Zone } from "../fixtures/dns-server.js";

/** An RSA-2048 DKIM key pair like the ones `POST /domains` generates. */
export function generateDkimKey(): { privatePem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { privatePem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), publicKey };
}

/** Writes a PEM private key into `dir` and returns its path (the domain's `key_path`). */
export async function writeKeyFile(dir: string, name: string, privatePem: string): Promise<string> {
  const path = join(dir, `${name}.pem`);
  await writeFile(path, privatePem, { mode: 0o600 });
  return path;
}

/** The base64 a DKIM `p=` carries: SubjectPublicKeyInfo by default, or the PKCS#1 mistake. */
export function publicKeyBase64(publicKey: KeyObject, form: "spki" | "pkcs1" = "spki"): string {
  return publicKey.export({ type: form, format: "der" }).toString("base64");
}

/** Splits a long TXT value into 255-character strings, as it must be published. */
export function txtStrings(value: string): string[] {
  const strings: string[] = [];
  for (let start = 0; start < value.length; start += 255)
    strings.push(value.slice(start, start + 255));
  return strings;
}

/** The three records of the DNS kit for `domain`, authorizing `ip`: every check passes. */
export function passingZone(options: {
  domain: string;
  selector: string;
  publicKey: KeyObject;
  ip: string;
}): Zone {
  const { domain, selector, publicKey, ip } = options;
  return {
    [domain]: { TXT: [[`v=spf1 ip4:${ip} -all`]] },
    [`${selector}._domainkey.${domain}`]: {
      TXT: [txtStrings(`v=DKIM1; k=rsa; p=${publicKeyBase64(publicKey)}`)],
    },
    [`_dmarc.${domain}`]: { TXT: [[`v=DMARC1; p=none; rua=mailto:dmarc@${domain}`]] },
  };
}

/** The public IP the checked configurations give (`public_ip`), which the SPF records authorize. */
export const CHECKED_IP = "203.0.113.5";

/**
 * A configuration directory for the DNS check: `ready.test`, whose three records a local DNS
 * server serves correctly, and `otherDomain`, which has none; both pending until checked.
 */
export interface CheckedConfig {
  readonly dir: string;
  readonly configPath: string;
  readonly dns: DnsServer;
  /** (Re)writes the configuration file with both domains pending. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function startCheckedConfig(otherDomain: string): Promise<CheckedConfig> {
  const key = generateDkimKey();
  const tmp = await makeTempDir("dns-check-");
  const configPath = join(tmp.path, "relay.json");
  const keyPath = await writeKeyFile(tmp.path, "ready.test", key.privatePem);
  const dns = await startDnsServer(
    passingZone({
      domain: "ready.test",
      selector: "relay",
      publicKey: key.publicKey,
      ip: CHECKED_IP,
    }),
  );
  return {
    dir: tmp.path,
    configPath,
    dns,
    async reset() {
      const pending = { selector: "relay", key_path: keyPath, status: "pending" };
      const file = {
        listen: "127.0.0.1:0",
        helo_hostname: "relay.example.test",
        public_ip: CHECKED_IP,
        domains: { "ready.test": pending, [otherDomain]: pending },
      };
      await writeFile(configPath, JSON.stringify(file, null, 2));
    },
    async close() {
      await dns.close();
      await tmp.remove();
    },
  };
}
