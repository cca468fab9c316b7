import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { connect as connectTls, type PeerCertificate } from "node:tls";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { ConfigError } from "@rd/common";
import { makeTempDir } from "@rd/common/test-kit";
import { afterAll, describe, expect, it } from "vitest";
import { firstAccepted, loadTlsCertificate } from "../../src/smtp/tls-certificate.js";
import { TestRelay } from "../helpers/relay-harness.js";
import { SmtpRelay } from "./smtp-harness.js";

const execFileAsync = promisify(execFile);
const CERTIFICATE_MODULE = fileURLToPath(
  new URL("../../dist/smtp/tls-certificate.js", import.meta.url),
);

/** The certificate the port presents after STARTTLS. */
async function certificateAfterStartTls(relay: SmtpRelay): Promise<PeerCertificate> {
  const raw = await relay.raw();
  await raw.reply();
  await raw.command("EHLO client.test");
  expect(await raw.command("STARTTLS")).toMatch(/^220 /);
  return new Promise((resolve, reject) => {
    const secure = connectTls({ socket: raw.socket, rejectUnauthorized: false }, () => {
      resolve(secure.getPeerCertificate());
      secure.destroy();
    });
    secure.once("error", reject);
  });
}

/** A self-signed pair for `hostname`, made as the relay makes its own. */
const selfSigned = (hostname: string) =>
  loadTlsCertificate({ certPath: undefined, keyPath: undefined, hostname, where: "test" });

describe("SMTP submission certificate", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it("makes a fresh self-signed certificate for helo_hostname when none is configured", async () => {
    const relay = await SmtpRelay.start({ config: { helo_hostname: "mx.relay.test" } });
    cleanups.push(() => relay.close());
    const certificate = await certificateAfterStartTls(relay);
    expect(certificate.subject.CN).toBe("mx.relay.test");
    expect(certificate.subjectaltname).toBe("DNS:mx.relay.test");
  });

  it("makes that certificate in a thread that ends: node-forge never stays in the caller's heap", async () => {
    // A process of its own: its module cache shows only what making the certificate loaded.
    const program = [
      'import { createRequire } from "node:module";',
      `const { loadTlsCertificate } = await import(${JSON.stringify(CERTIFICATE_MODULE)});`,
      'const made = await loadTlsCertificate({ hostname: "t.relay.test", where: "test" });',
      "const cache = Object.keys(createRequire(import.meta.url).cache);",
      "console.log(JSON.stringify({ cert: made.cert, forge: cache.some((path) => path.includes('node-forge')) }));",
    ].join("\n");
    const dir = await makeTempDir();
    cleanups.push(() => dir.remove());
    const script = join(dir.path, "certificate.mjs");
    await writeFile(script, program);
    const { stdout } = await execFileAsync(process.execPath, [script]);
    const { cert, forge } = JSON.parse(stdout) as { cert: string; forge: boolean };
    expect(new X509Certificate(cert).subject).toBe("CN=t.relay.test");
    expect(forge).toBe(false);
  });

  it("presents the configured smtp_tls_cert and smtp_tls_key (paths relative to the config file)", async () => {
    const pems = await selfSigned("configured.relay.test");
    const relay = await SmtpRelay.start();
    cleanups.push(() => relay.close());
    // The files beside this relay's configuration, then a second relay on the same directory.
    await writeFile(join(relay.send.relay.dir, "smtp.crt"), pems.cert);
    await writeFile(join(relay.send.relay.dir, "smtp.key"), pems.key, { mode: 0o600 });
    await relay.send.relay.relay.config.update((file) => {
      file.smtp_tls_cert = "smtp.crt";
      file.smtp_tls_key = "smtp.key";
    });
    await relay.send.relay.restart();
    await relay.send.relay.relay.listen();
    const certificate = await certificateAfterStartTls(relay);
    expect(certificate.subject.CN).toBe("configured.relay.test");
  });

  it("refuses to boot with a certificate and no key", async () => {
    const temp = await makeTempDir("relay-smtp-tls-");
    cleanups.push(temp.remove);
    const certPath = join(temp.path, "only.crt");
    await writeFile(certPath, "not used");
    const started = TestRelay.start({
      config: { smtp_listen: "127.0.0.1:0", smtp_tls_cert: certPath },
      env: { RELAY_DB: join(temp.path, "state") },
    });
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/smtp_tls_key/);
  });
});

describe("the self-signed certificate", () => {
  it("is made again when OpenSSL refuses a pair, and the refusal is thrown after the last attempt", async () => {
    const good = await selfSigned("relay.test");
    const refused = { key: good.key.replace(/[A-Za-z]/, "!"), cert: good.cert };
    const pairs = [refused, refused, good];
    let made = 0;
    await expect(firstAccepted(async () => pairs[made++] as typeof good)).resolves.toBe(good);
    expect(made).toBe(3);
    await expect(firstAccepted(async () => refused, 2)).rejects.toThrow();
  });
});
