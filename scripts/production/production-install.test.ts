import { existsSync } from "node:fs";
import { mkdir, readFile, realpath, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, MARIADB, serviceAvailable } from "@rd/common/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../../packages/delivery/test/helpers/test-database.js";
import {
  S3RVER_CREDENTIALS,
  startS3Server,
} from "../../packages/delivery/test/storage/s3-server.js";
import { type ComposeService, composeServices, parseEnvFile } from "./compose-file.js";
import { argsOf, envOf, parseDockerfile, type Stage } from "./dockerfile.js";
import { INSTALL_DIR, ProductionInstall } from "./production-install-fixture.js";
import { runCommand, toolAvailable } from "./run-command.js";
import {
  deliveryLocalEnv,
  SECRETS,
  SERVICES,
  type ServiceName,
  writeRelayConfig,
} from "./service-fixtures.js";
import { StartedService } from "./started-service.js";
import { parseUnitFile, unitEnvironment, unitValues } from "./unit-file.js";

// The README's production install, end to end: a fresh clone of this repository's HEAD (the
// committed files, not the working tree), scripts/production-install.sh into a target folder,
// then the services started from that install the way the systemd units and the container recipe
// start them. Slow (a fresh `npm ci` and a native build of better-sqlite3: 3 to 9 minutes on
// the 2-core machine, by its load), so the install runs once, in beforeAll.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const INSTALL_TIMEOUT_MS = 20 * 60_000;
// Starting services on the shared 2-core machine can take long while other suites run.
const START_TIMEOUT_MS = 120_000;
const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

describe("a production install from a fresh clone", () => {
  let install: ProductionInstall;
  let clone: string;
  let target: string;
  const sandboxed = (value: string) => install.sandboxed(value);

  /**
   * Waits for `/health`, checks that the started PID is Node itself, runs `whileUp`, then sends
   * SIGTERM as a supervisor does: the service must exit 0.
   */
  async function exercise(
    service: StartedService,
    port: number,
    whileUp: () => Promise<void> = async () => {},
  ): Promise<void> {
    try {
      await service.waitHealthy(`http://127.0.0.1:${port}/health`, 60_000);
      expect(await service.executable()).toBe(await realpath(process.execPath));
      await whileUp();
    } catch (error) {
      await service.terminate();
      throw error;
    }
    expect(await service.terminate(), service.log()).toBe(0);
  }

  beforeAll(async () => {
    install = await ProductionInstall.make(ROOT, INSTALL_TIMEOUT_MS);
    ({ clone, target } = install);
  }, INSTALL_TIMEOUT_MS);
  afterAll(async () => {
    await install?.remove();
  });

  it("holds the compiled services with their runtime dependencies only", async () => {
    expect(install.result.code, install.result.stdout + install.result.stderr).toBe(0);
    for (const built of [
      "packages/common/dist/index.js",
      "packages/relay/dist/cli.js",
      "packages/delivery/dist/cli.js",
      "packages/delivery/dashboard/dist/main.js",
      "packages/delivery/dashboard/public/index.html",
      SERVICES.relay.bin,
      SERVICES.delivery.bin,
      "node_modules/better-sqlite3/build/Release/better_sqlite3.node",
    ]) {
      expect(existsSync(join(target, built)), built).toBe(true);
    }
    for (const absent of [
      "node_modules/typescript",
      "node_modules/vitest",
      "node_modules/@biomejs",
      "node_modules/s3rver",
      "packages/relay/src",
      "packages/delivery/test",
      "packages/delivery/dashboard/src",
    ]) {
      expect(existsSync(join(target, absent)), absent).toBe(false);
    }
    const manifest = JSON.parse(await readFile(join(target, "package.json"), "utf8"));
    expect(manifest.scripts).toBeUndefined();
    expect(await readFile(join(target, ".production-install"), "utf8")).toContain(
      `node ${process.version}`,
    );
  });

  describe("the systemd units", () => {
    const unitText = (service: ServiceName) =>
      readFile(join(clone, `deploy/systemd/${service}.service`), "utf8");

    /** Starts `service` with its unit's ExecStart, Environment and WorkingDirectory. */
    async function startAsUnit(service: ServiceName): Promise<[StartedService, number]> {
      const unit = parseUnitFile(await unitText(service));
      const execStart = unitValues(unit, "Service", "ExecStart")[0] ?? "";
      // The launcher run as a program: its shebang execs Node with the memory options.
      const [command = "", ...args] = sandboxed(execStart).split(" ");
      expect(command).toBe(join(target, SERVICES[service].bin));
      expect(args).toEqual(["serve"]);
      const cwd = sandboxed(unitValues(unit, "Service", "WorkingDirectory")[0] ?? "");
      // What systemd creates (StateDirectory, LogsDirectory) and the operator adds: the secrets
      // of the EnvironmentFile, a loopback port.
      await mkdir(cwd, { recursive: true, mode: 0o700 });
      await mkdir(sandboxed("/var/log/relay"), { recursive: true, mode: 0o700 });
      const env: Record<string, string> = { PATH: process.env.PATH ?? "" };
      for (const [name, value] of Object.entries(unitEnvironment(unit))) {
        env[name] = sandboxed(value);
      }
      const port = await freePort();
      if (service === "relay") {
        await writeRelayConfig(env.RELAY_CONFIG ?? "", port);
        env.RELAY_AUTH_TOKEN = SECRETS.RELAY_AUTH_TOKEN;
      } else {
        Object.assign(env, deliveryLocalEnv(port), {
          API_KEY: SECRETS.API_KEY,
          JWT_SECRET: SECRETS.JWT_SECRET,
        });
      }
      return [new StartedService(command, args, { env, cwd }), port];
    }

    it("start both services from the install: /health answers, the dashboard loads, SIGTERM exits 0", {
      timeout: START_TIMEOUT_MS,
    }, async () => {
      const started = await Promise.all(SERVICE_NAMES.map(startAsUnit));
      // The delivery's dashboard comes with the install: its page and its compiled script.
      const dashboardServed = (port: number) => async () => {
        for (const path of ["/dashboard/", "/dashboard/main.js"]) {
          const response = await fetch(`http://127.0.0.1:${port}${path}`);
          expect(response.status, path).toBe(200);
        }
      };
      await Promise.all(
        started.map(([service, port], index) =>
          exercise(
            service,
            port,
            SERVICE_NAMES[index] === "delivery" ? dashboardServed(port) : undefined,
          ),
        ),
      );
    });

    it("pass systemd-analyze verify, with their paths in the install", async () => {
      if (!(await toolAvailable("systemd-analyze", "Debian: apt-get install systemd"))) return;
      const files: string[] = [];
      for (const service of SERVICE_NAMES) {
        const text = await unitText(service);
        const unit = parseUnitFile(text);
        // The supervisor's signal must reach Node, with time for its 10 s grace period.
        expect(unitValues(unit, "Service", "ExecStart")).toEqual([
          `/opt/relay-delivery/${SERVICES[service].bin} serve`,
        ]);
        expect(unitValues(unit, "Service", "KillSignal")).toEqual(["SIGTERM"]);
        expect(Number(unitValues(unit, "Service", "TimeoutStopSec")[0])).toBeGreaterThan(10);
        expect(unitValues(unit, "Service", "User")).toEqual([service]);
        expect(unitValues(unit, "Service", "NoNewPrivileges")).toEqual(["yes"]);
        expect(unitValues(unit, "Service", "ProtectSystem")).toEqual(["strict"]);
        expect(unitValues(unit, "Service", "ReadWritePaths")[0]).toContain(`/var/lib/${service}`);
        const file = install.scratch(`${service}.service`);
        await writeFile(file, sandboxed(text));
        files.push(file);
      }
      // An unknown key or a bad value is only a warning on stderr: none is allowed.
      const verified = await runCommand("systemd-analyze", ["verify", ...files]);
      expect(verified).toEqual({ code: 0, stdout: "", stderr: "" });
    });
  });

  describe("the container recipe (no Docker engine here: its steps, run without one)", () => {
    let build: Stage;
    let image: Stage;
    let compose: Record<string, ComposeService>;
    const recipe = (file: string) => join(clone, "deploy/docker", file);

    beforeAll(async () => {
      [build, image] = parseDockerfile(await readFile(recipe("Dockerfile"), "utf8")) as [
        Stage,
        Stage,
      ];
      const vars = parseEnvFile(await readFile(recipe(".env.example"), "utf8"));
      compose = composeServices(await readFile(recipe("compose.yaml"), "utf8"), vars);
    });

    /** The image's environment with a compose service's, its paths in this test's folder. */
    async function containerEnv(service: ComposeService): Promise<Record<string, string>> {
      const env: Record<string, string> = {};
      for (const [name, value] of Object.entries({ ...envOf(image), ...service.environment })) {
        env[name] = sandboxed(value);
      }
      // The image's PATH ends in its own; here this Node comes first, so `#!/usr/bin/env node`
      // in the launchers finds the Node the install was built for.
      env.PATH = (env.PATH ?? "").replace(
        "$PATH",
        `${dirname(process.execPath)}:${process.env.PATH}`,
      );
      // What the image's `RUN install -d … /var/lib/relay /var/lib/delivery` creates.
      for (const state of ["/var/lib/relay", "/var/lib/delivery"]) {
        await mkdir(sandboxed(state), { recursive: true, mode: 0o700 });
      }
      return env;
    }

    /** Starts a compose service's command, resolved through PATH as the image does. */
    function startAsContainer(service: ComposeService, env: Record<string, string>) {
      const [command = "", ...args] = service.command ?? [];
      return new StartedService(command, args, {
        env,
        cwd: sandboxed(argsOf(image, "WORKDIR").at(-1) ?? ""),
      });
    }

    it("builds with the production install above and runs it unprivileged", () => {
      expect(build.name).toBe("build");
      expect(argsOf(build, "RUN")).toEqual([`scripts/production-install.sh ${INSTALL_DIR}`]);
      expect(argsOf(image, "COPY")).toEqual([`--from=build ${INSTALL_DIR} ${INSTALL_DIR}`]);
      expect(argsOf(image, "USER")).toEqual(["node"]);
      expect(JSON.parse(argsOf(image, "CMD")[0] ?? "")).toEqual(["relay", "serve"]);
    });

    it("starts the relay as compose does: /health, its healthcheck passes, SIGTERM exits 0", {
      timeout: START_TIMEOUT_MS,
    }, async () => {
      const relay = compose.relay ?? {};
      const env = await containerEnv(relay);
      const port = await freePort();
      await writeRelayConfig(env.RELAY_CONFIG ?? "", port);
      await exercise(startAsContainer(relay, env), port, async () => {
        const [, command = "", ...args] = relay.healthcheck?.test ?? [];
        expect(await runCommand(command, args, { env })).toMatchObject({ code: 0 });
      });
    });

    it("starts the delivery service as compose does, on MariaDB and an S3-compatible store", {
      timeout: START_TIMEOUT_MS,
    }, async () => {
      if (!(await serviceAvailable(MARIADB))) return;
      const delivery = compose.delivery ?? {};
      const env = await containerEnv(delivery);
      // Compose's hosts are its containers; here MariaDB and s3rver stand in for them.
      expect(new URL(env.DATABASE_URL ?? "").host).toBe("mariadb:3306");
      expect(env.OBJECTSTORE_ENDPOINT).toBe("http://minio:9000");
      const database = await createTestDatabase("mysql");
      const s3 = await startS3Server(["releases"]);
      const port = await freePort();
      try {
        Object.assign(env, deliveryLocalEnv(port), {
          DATABASE_URL: database.url,
          OBJECTSTORE_ENDPOINT: s3.endpoint,
          OBJECTSTORE_ACCESS_KEY: S3RVER_CREDENTIALS.accessKeyId,
          OBJECTSTORE_SECRET_KEY: S3RVER_CREDENTIALS.secretAccessKey,
        });
        await exercise(startAsContainer(delivery, env), port, async () => {
          const status = await fetch(`http://127.0.0.1:${port}/monitor/status`);
          expect(await status.json()).toMatchObject({
            services: { mysql: true, objectstore: true },
          });
          const [, command = "", ...args] = delivery.healthcheck?.test ?? [];
          const probe = args.map((arg) => arg.replace(":8081/", `:${port}/`));
          expect(await runCommand(command, probe, { env })).toMatchObject({ code: 0 });
        });
      } finally {
        await s3.close();
        await database.drop();
      }
    });

    it("has a compose file docker-compose validates, which refuses to start without its secrets", async () => {
      const how = "Debian: apt-get install --no-install-recommends docker-compose";
      if (!(await toolAvailable("docker-compose", how))) return;
      const config = (envFile: string) =>
        runCommand(
          "docker-compose",
          ["--env-file", envFile, "-f", recipe("compose.yaml"), "config", "-q"],
          {
            env: { PATH: process.env.PATH ?? "" },
          },
        );
      expect(await config(recipe(".env.example"))).toEqual({ code: 0, stdout: "", stderr: "" });
      const empty = install.scratch("empty.env");
      await writeFile(empty, "");
      const bare = await config(empty);
      expect(bare.code).not.toBe(0);
      expect(bare.stderr).toMatch(/set [A-Z_]+ in \.env/);
    });
  });
});
