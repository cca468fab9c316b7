import { hostname } from "node:os";
import { dirname, resolve } from "node:path";
import type { RelayConfig } from "../config/schema.js";
import type { SubmissionServer, SubmissionServerDeps } from "./submission-server.js";
import { loadTlsCertificate } from "./tls-certificate.js";

/** Log target of the submission port. */
export const SMTP_TARGET = "relay::smtp";

/**
 * The submission port as the configuration describes it, or `undefined` when `smtp_listen` is
 * absent (listener off). Reads the certificate files (a relative path is taken from the
 * configuration file's directory, `where`) or makes a self-signed certificate; throws
 * `ConfigError` for an unusable pair.
 */
export async function createConfiguredSubmissionServer(
  config: RelayConfig,
  where: string,
  deps: Omit<SubmissionServerDeps, "settings">,
): Promise<SubmissionServer | undefined> {
  if (config.smtp_listen === undefined) return undefined;
  const name = config.helo_hostname ?? hostname();
  const fromConfigDir = (path: string | undefined) =>
    path === undefined ? undefined : resolve(dirname(where), path);
  const tls = await loadTlsCertificate({
    certPath: fromConfigDir(config.smtp_tls_cert),
    keyPath: fromConfigDir(config.smtp_tls_key),
    hostname: name,
    where,
  });
  // NOTE: loaded only with smtp_listen set: smtp-server stays out of memory otherwise.
  const { createSubmissionServer } = await import("./submission-server.js");
  return createSubmissionServer({
    ...deps,
    settings: {
      listen: config.smtp_listen,
      maxSize: config.smtp_max_size,
      requireTls: config.smtp_require_tls,
      timeoutSecs: config.smtp_timeout_secs,
      hostname: name,
      tls,
    },
  });
}
