import { AsyncLocalStorage } from "node:async_hooks";

// The HTTP request whose work is running: the logger stamps its id on every line written on its
// behalf, however deep in the services the line is written.
const requests = new AsyncLocalStorage<string>();

/** The id of the HTTP request the current work belongs to, if any. */
export function currentRequestId(): string | undefined {
  return requests.getStore();
}

/** Runs `work` (and everything it starts) as part of request `requestId`. */
export function runInRequest<T>(requestId: string, work: () => T): T {
  return requests.run(requestId, work);
}
