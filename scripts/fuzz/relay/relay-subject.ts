import { generateKeyPairSync } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { startSmtpSink } from "../../../packages/relay/test/fixtures/smtp-sink.js";
import type { Instance, Subject } from "../campaign-types.js";
import { framingTarget } from "../framing-inputs.js";
import { callJson } from "../http-input.js";
import { compiledBin, startService } from "../service-process.js";
import { adminTarget, type RelayContext, sendRawTarget, sendTarget } from "./relay-targets.js";
import { smtpTarget } from "./smtp-target.js";

// The relay under fuzzing: the compiled relay with a temporary configuration and state, SMTP
// submission on, one active DKIM domain, throttle, quotas and send gate off, every recipient
// domain either pointed at a local SMTP sink (`mx_override`) or at a closed port, and RELAY_DNS
// at a closed loopback port, so no traffic leaves loopback.

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../packages/relay");
const ADMIN_TOKEN = "fuzz-admin-token";
const SENDER_DOMAIN = "fuzz.test";
const SINK_DOMAIN = "sink.test";
const DEAD_DOMAIN = "dead.test";

/** The longest throttle window a restore waits out (the relay counts per minute). */
const MAX_THROTTLE_WAIT_SECS = 61;

/** Settings that keep the relay fast and the fuzzer un-throttled (restored after admin inputs). */
const OPEN_LIMITS = {
  api_rate_per_min: 0,
  send_delay_secs: 0,
  default_domain_limits: { per_hour: 0, per_day: 0 },
} as const;

export async function relaySubject(): Promise<Subject> {
  const bin = compiledBin(PACKAGE_DIR, "relay.js");
  const sink = await startSmtpSink({ tls: "none" });
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" });
  // The sink keeps every message it accepts; the fuzzer never reads them, so memory stays flat.
  const forget = setInterval(() => sink.messages.splice(0), 5_000);

  return {
    name: "relay",
    async startInstance(): Promise<Instance> {
      const dir = await makeTempDir("relay-fuzz-");
      const [port, smtpPort, closedPort] = [await freePort(), await freePort(), await freePort()];
      const keyPath = join(dir.path, "fuzz.pem");
      await writeFile(keyPath, pem, { mode: 0o600 });
      const configPath = join(dir.path, "relay.json");
      await writeFile(
        configPath,
        JSON.stringify({
          listen: `127.0.0.1:${port}`,
          smtp_listen: `127.0.0.1:${smtpPort}`,
          helo_hostname: "relay.fuzz.test",
          domains: { [SENDER_DOMAIN]: { selector: "relay", key_path: keyPath, status: "active" } },
          mx_override: {
            [SINK_DOMAIN]: [sink.address],
            [DEAD_DOMAIN]: [`127.0.0.1:${closedPort}`],
          },
          ...OPEN_LIMITS,
          tick_interval_secs: 0,
          sync_retry_delays_secs: [0],
          smtp_timeout_secs: 5,
          public_ip: "192.0.2.1",
        }),
      );
      const service = await startService({
        bin,
        port,
        env: {
          RELAY_CONFIG: configPath,
          RELAY_AUTH_TOKEN: ADMIN_TOKEN,
          RELAY_DB: join(dir.path, "state"),
          // Nothing answers DNS there: MX lookups and checks fail at once, on loopback.
          RELAY_DNS: `127.0.0.1:${closedPort}`,
          RUST_LOG: "warn",
        },
      });
      const close = async () => {
        await service.stop();
        await dir.remove();
      };
      try {
        const admin = { "x-auth-token": ADMIN_TOKEN };
        const created = await callJson(port, {
          method: "POST",
          path: "/clients",
          headers: admin,
          json: { name: "fuzz", domains: [SENDER_DOMAIN] },
        });
        const client = created.body as { client_id?: string; secret?: string } | undefined;
        if (created.status !== 201 || !client?.client_id || !client.secret)
          throw new Error(`POST /clients answered ${created.status}`);
        const context: RelayContext = {
          port,
          adminToken: ADMIN_TOKEN,
          authorization: `Basic ${Buffer.from(`${client.client_id}:${client.secret}`).toString("base64")}`,
          clientId: client.client_id,
          senderDomain: SENDER_DOMAIN,
          sinkDomain: SINK_DOMAIN,
          deadDomain: DEAD_DOMAIN,
          createdClients: [],
          createdDomains: [],
        };
        // After an input that changed the limits or the allowlist: open them again; false when
        // the fuzzer can no longer do so (the change locked it out). A throttle answer is not a
        // lockout while the relay still takes the call once its window has passed: a legal low
        // `api_rate_per_min` slows its operator down, it does not shut them out.
        const settle = async (call: () => ReturnType<typeof callJson>) => {
          let answer = await call();
          for (let retry = 0; answer.status === 429 && retry < 2; retry += 1) {
            const seconds = Number(/^retry-after:\s*(\d+)/im.exec(answer.headers)?.[1] ?? 60);
            await sleep(Math.min(seconds, MAX_THROTTLE_WAIT_SECS) * 1000);
            answer = await call();
          }
          return answer.status === 200;
        };
        const restore = async () =>
          (await settle(() =>
            callJson(port, {
              method: "PUT",
              path: "/ratelimit",
              headers: admin,
              json: { ...OPEN_LIMITS, domains: { [SENDER_DOMAIN]: { per_hour: 0, per_day: 0 } } },
            }),
          )) &&
          (await settle(() =>
            callJson(port, {
              method: "PUT",
              path: "/allowlist",
              headers: admin,
              json: { allowlist: [] },
            }),
          ));
        return {
          service,
          targets: [
            sendTarget(context),
            sendRawTarget(context),
            adminTarget(context, restore),
            framingTarget(port, {
              posts: [
                { method: "POST", path: "/send" },
                { method: "POST", path: "/send-raw" },
                { method: "POST", path: "/clients" },
                { method: "PUT", path: "/allowlist" },
              ],
              credentials: { authorization: context.authorization, "x-auth-token": ADMIN_TOKEN },
            }),
            smtpTarget({
              smtpPort,
              clientId: client.client_id,
              secret: client.secret,
              senderDomain: SENDER_DOMAIN,
              sinkDomain: SINK_DOMAIN,
            }),
          ],
          close,
        };
      } catch (error) {
        await close();
        throw error;
      }
    },
    async close() {
      clearInterval(forget);
      await sink.close();
    },
  };
}
