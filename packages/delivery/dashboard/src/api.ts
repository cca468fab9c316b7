// Every call to the service goes through `api`: JSON in and out, the session cookie sent by the
// browser (HttpOnly: no script ever sees a token), a silent refresh when the access token has
// expired, and every failure turned into an error that carries the service's own message.

/** A failed call: the service's `{error}` message, and for a 429 when to retry. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** Seconds from `Retry-After`, for a 429. */
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

/** The session is gone and the refresh cookie could not renew it: sign in again. */
export class SessionEnded extends Error {
  constructor() {
    super("Your session has ended: please sign in again");
  }
}

/** An action that needs the API key was asked for while none is set for this tab. */
export class KeyNeeded extends Error {}

const KEY_ITEM = "delivery.apiKey";
/** Calls whose 401 is their answer (wrong password, no refresh cookie), not an expired session. */
const SESSIONLESS = new Set(["/auth/login", "/auth/register", "/auth/refresh", "/auth/logout"]);

/** The API key, kept for this tab only (sessionStorage: never a cookie, never localStorage). */
export const apiKey = {
  get: (): string | null => sessionStorage.getItem(KEY_ITEM),
  set: (key: string): void => sessionStorage.setItem(KEY_ITEM, key),
  clear: (): void => sessionStorage.removeItem(KEY_ITEM),
};

let refreshing: Promise<boolean> | null = null;

/** Asks for a new access token with the refresh cookie; concurrent callers share one request. */
export function refreshSession(): Promise<boolean> {
  refreshing ??= fetch("/auth/refresh", { method: "POST" })
    .then((response) => response.ok)
    .catch(() => false)
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

export interface CallOptions {
  readonly method?: string;
  readonly body?: unknown;
  /** Send the tab's API key (`X-API-Key`): the actions reserved to it. */
  readonly withKey?: boolean;
}

export async function api<T>(path: string, options: CallOptions = {}): Promise<T> {
  const key = options.withKey ? apiKey.get() : null;
  if (options.withKey && !key) throw new KeyNeeded();
  const headers: Record<string, string> = { accept: "application/json" };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (key) headers["x-api-key"] = key;
  const send = () =>
    fetch(path, {
      method: options.method ?? "GET",
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
    });
  let response = await send();
  // With the key, a 401 means the key is wrong.
  if (response.status === 401 && !key && !SESSIONLESS.has(path)) {
    if (!(await refreshSession())) throw new SessionEnded();
    response = await send();
    if (response.status === 401) throw new SessionEnded();
  }
  const data = (await response.json().catch(() => null)) as { error?: string } | null;
  if (!response.ok) {
    if (response.status === 401 && key) apiKey.clear();
    const retry = response.headers.get("retry-after");
    const message =
      response.status === 401 && key
        ? "The API key was refused (Unauthorized); it has been forgotten, enter it again"
        : (data?.error ?? `${response.status} ${response.statusText}`);
    throw new ApiError(response.status, message, retry === null ? null : Number(retry));
  }
  return data as T;
}

/** What to tell the person about a failure: the service's message, and when to retry a 429. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError && error.status === 429 && error.retryAfter !== null) {
    const at = new Date(Date.now() + error.retryAfter * 1000).toLocaleTimeString();
    return `${error.message} (too many requests: retry in ${error.retryAfter} s, at ${at})`;
  }
  if (error instanceof ApiError) return `${error.message} (${error.status})`;
  return error instanceof Error ? error.message : String(error);
}
