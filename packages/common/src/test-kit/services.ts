import { connect } from "node:net";

/** A server the machine is expected to run (MariaDB), probed over TCP. */
export interface ExternalService {
  readonly name: string;
  readonly host: string;
  readonly port: number;
}

export const MARIADB: ExternalService = { name: "MariaDB", host: "127.0.0.1", port: 3306 };

function reachable({ host, port }: ExternalService, timeoutMs = 1500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/**
 * Whether tests that need `service` can run. Without it they are skipped with a loud
 * message, except under `CI=true`, where a missing service is a failure.
 */
export async function serviceAvailable(service: ExternalService): Promise<boolean> {
  if (await reachable(service)) return true;
  const where = `${service.host}:${service.port}`;
  if (process.env.CI === "true") {
    throw new Error(`${service.name} is required under CI=true but is not reachable at ${where}`);
  }
  console.warn(
    `\n!!! ${service.name} is not reachable at ${where}: the tests that need it are SKIPPED !!!\n`,
  );
  return false;
}
