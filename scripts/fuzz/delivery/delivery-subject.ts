import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { systemClock } from "@rd/common";
import { freePort, makeTempDir } from "@rd/common/test-kit";
import { startGithubStub } from "../../../packages/delivery/test/fixtures/github-stub.js";
import { startTelegramStub } from "../../../packages/delivery/test/fixtures/telegram-stub.js";
import { createReleaseStub } from "../../../packages/delivery/test/releases/release-stub.js";
import { startS3Server } from "../../../packages/delivery/test/storage/s3-server.js";
import type { Instance, Subject } from "../campaign-types.js";
import { framingTarget } from "../framing-inputs.js";
import { callJson } from "../http-input.js";
import { compiledBin, startService } from "../service-process.js";
import { downloadFaults } from "./codehost-downloads.js";
import {
  apiTarget,
  authTokensTarget,
  type DeliveryContext,
  publishTarget,
  type Schema,
  statusTarget,
  webhookTarget,
} from "./delivery-targets.js";

// The delivery service under fuzzing: the compiled service on a temporary SQLite database and
// local storage, with its code host (the GitHub stub with releases and misbehaving downloads),
// object store (s3rver) and Telegram (the Bot API stub) all on loopback in this process.

const PACKAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "../../../packages/delivery");
const API_KEY = "fuzz-api-key";
const JWT_SECRET = "fuzz-jwt-secret-0123456789abcdefghijkl";
const WEBHOOK_SECRET = "fuzz-webhook-secret";
const TELEGRAM_TOKEN = "123:fuzz";
const BUCKET = "fuzz-bucket";
const REPOSITORIES = ["fuzz/repo-0", "fuzz/repo-1", "fuzz/repo-2", "Fuzz/Repo-3"];

interface OpenApi {
  paths: Record<
    string,
    Record<
      string,
      {
        requestBody?: { content?: Record<string, { schema?: Schema }> };
        parameters?: Array<{ name: string; in: string }>;
      }
    >
  >;
}

export async function deliverySubject(): Promise<Subject> {
  const bin = compiledBin(PACKAGE_DIR, "delivery.js");
  const faults = downloadFaults();
  const releases = createReleaseStub();
  // The faults' hook is registered before the release routes it overrides.
  const stub = await startGithubStub({ routes: [faults.routes, releases.routes] });
  for (const repository of REPOSITORIES) stub.addRepository(repository);
  const s3 = await startS3Server([BUCKET]);
  const telegram = await startTelegramStub(TELEGRAM_TOKEN);
  // The stubs keep every request; the fuzzer never reads them, so memory stays flat.
  const forget = setInterval(() => {
    stub.state.requests.splice(0);
    telegram.messages.splice(0);
    telegram.paths.splice(0);
  }, 5_000);

  return {
    name: "delivery",
    async startInstance(): Promise<Instance> {
      const dir = await makeTempDir("delivery-fuzz-");
      const port = await freePort();
      const service = await startService({
        bin,
        port,
        env: {
          HOST: "127.0.0.1",
          PORT: String(port),
          DATABASE_URL: `sqlite:${join(dir.path, "delivery.db")}`,
          API_KEY,
          JWT_SECRET,
          HOSTING_WEBHOOK_SECRET: WEBHOOK_SECRET,
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          CODEHOST_API_URL: stub.url,
          CODEHOST_TOKEN: "fuzz-token",
          LOCAL_STORAGE_DIR: join(dir.path, "files"),
          OBJECTSTORE_ENDPOINT: s3.endpoint,
          OBJECTSTORE_ACCESS_KEY: "S3RVER",
          OBJECTSTORE_SECRET_KEY: "S3RVER",
          TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
          TELEGRAM_CHAT_ID: "42",
          TELEGRAM_API_URL: telegram.url,
          SCHEDULER_INTERVAL_MINUTES: "0",
          RUST_LOG: "warn",
        },
      });
      const close = async () => {
        await service.stop();
        await dir.remove();
      };
      try {
        const key = { "x-api-key": API_KEY };
        const user = { email: "fuzz@example.com", password: "fuzz-password-1", name: "Fuzz" };
        const registered = await callJson(port, {
          method: "POST",
          path: "/auth/register",
          headers: key,
          json: user,
        });
        const login = await callJson(port, {
          method: "POST",
          path: "/auth/login",
          json: { email: user.email, password: user.password },
        });
        const session = login.body as { token?: string; user?: { id?: number } } | undefined;
        if (registered.status !== 201 || !session?.token)
          throw new Error(`register/login answered ${registered.status}/${login.status}`);
        for (const repository of REPOSITORIES) {
          await callJson(port, {
            method: "POST",
            path: "/monitor/repositories",
            headers: key,
            json: { repository },
          });
        }
        const openapi = (await (
          await fetch(`http://127.0.0.1:${port}/openapi.json`)
        ).json()) as OpenApi;
        const routes = Object.entries(openapi.paths).flatMap(([path, methods]) =>
          Object.entries(methods).map(([method, operation]) => ({
            method: method.toUpperCase(),
            path,
            body: operation.requestBody?.content?.["application/json"]?.schema,
            query: (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
          })),
        );
        const context: DeliveryContext = {
          port,
          apiKey: API_KEY,
          jwtSecret: JWT_SECRET,
          webhookSecret: WEBHOOK_SECRET,
          token: session.token,
          clock: systemClock,
          userId: session.user?.id ?? 1,
          repositories: REPOSITORIES,
          tags: new Map(),
          bucket: BUCKET,
          stub,
          releases,
          faults,
          routes,
        };
        return {
          service,
          targets: [
            apiTarget(context),
            authTokensTarget(context),
            webhookTarget(context),
            publishTarget(context),
            statusTarget(context),
            framingTarget(port, {
              posts: routes
                .filter((route) => route.body)
                .map(({ method, path }) => ({ method, path })),
              credentials: { "x-api-key": API_KEY },
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
      await telegram.close();
      await s3.close();
      await stub.close();
    },
  };
}
