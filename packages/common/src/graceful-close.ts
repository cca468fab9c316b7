import { withinDeadline } from "./shutdown.js";

/** What graceful closing needs of a Fastify instance. */
export interface ClosableHttpApp {
  close(): Promise<unknown>;
  readonly server: { closeIdleConnections(): void; closeAllConnections(): void };
}

/** How often idle keep-alive connections are closed while shutting down. */
const IDLE_SWEEP_MS = 50;

/**
 * Stops accepting connections and lets the requests in flight finish within `graceMs`; past it,
 * calls `onOverrun` (to log it) and cuts their connections. Resolves once the server is closed:
 * `true` when every request finished in time. Call before closing what the requests use.
 */
export async function closeHttpGracefully(
  app: ClosableHttpApp,
  graceMs: number,
  onOverrun?: () => void,
): Promise<boolean> {
  const closing = app.close();
  // NOTE: Node closes only the keep-alive connections idle when closing starts; one whose
  // request finishes later would stay open until the client closes it: sweep those as they idle.
  const sweeper = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  try {
    if (await withinDeadline(closing, graceMs)) return true;
    onOverrun?.();
    app.server.closeAllConnections();
    await closing;
    return false;
  } finally {
    clearInterval(sweeper);
  }
}
