import { readFile } from "node:fs/promises";
import { createSecureContext } from "node:tls";
import { Worker } from "node:worker_threads";
import { ConfigError, compiledModuleUrl } from "@rd/common";

/** PEM key and certificate the port presents after STARTTLS. */
export interface TlsCertificate {
  readonly key: string;
  readonly cert: string;
}

/**
 * The STARTTLS certificate: `smtp_tls_cert` + `smtp_tls_key` when configured (both or neither),
 * otherwise a fresh self-signed one for `hostname`, never smtp-server's built-in certificate
 * (its private key is public). Throws `ConfigError` for an unusable pair.
 */
export async function loadTlsCertificate(options: {
  certPath: string | undefined;
  keyPath: string | undefined;
  hostname: string;
  /** Names the configuration in errors. */
  where: string;
}): Promise<TlsCertificate> {
  const { certPath, keyPath, where } = options;
  if (certPath === undefined && keyPath === undefined) return selfSigned(options.hostname);
  if (certPath === undefined || keyPath === undefined) {
    const missing = certPath === undefined ? "smtp_tls_cert" : "smtp_tls_key";
    throw new ConfigError(where, "smtp_tls_cert and smtp_tls_key go together", missing);
  }
  const read = async (path: string, field: string) => {
    try {
      return await readFile(path, "utf8");
    } catch (error) {
      throw new ConfigError(where, `cannot be read (${(error as Error).message})`, field);
    }
  };
  return { cert: await read(certPath, "smtp_tls_cert"), key: await read(keyPath, "smtp_tls_key") };
}

const WORKER_URL = compiledModuleUrl("./self-signed-worker.js", import.meta.url);

/**
 * A self-signed certificate for `hostname`, made in a worker thread that ends with it.
 * NOTE: node-forge (under selfsigned) stays loaded once imported, some 2.3 MiB of heap: in the
 * event loop's heap, every full collection would mark it again for the life of the relay.
 */
function selfSigned(hostname: string): Promise<TlsCertificate> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_URL, { workerData: hostname });
    worker.once("message", resolve);
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the certificate's thread exited (${code})`)));
  });
}

/**
 * The first pair `make` gives that OpenSSL accepts, out of `attempts`. NOTE: OpenSSL rarely
 * refused a self-signed pair encoded by node-forge (`asn1 encoding routines::illegal padding`,
 * seen twice in CI). One cause gives exactly that error: selfsigned's random serial starting
 * with two zero bytes, of which node-forge drops only one (one certificate in 65,536). Such a
 * pair is made again rather than failing the boot.
 */
export async function firstAccepted(
  make: () => Promise<TlsCertificate>,
  attempts = 5,
): Promise<TlsCertificate> {
  for (let attempt = 1; ; attempt += 1) {
    const pair = await make();
    try {
      createSecureContext(pair);
      return pair;
    } catch (error) {
      if (attempt >= attempts) throw error;
    }
  }
}
