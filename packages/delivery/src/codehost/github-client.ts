import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import { defineError, type Logger } from "@rd/common";

/** The code host failed or refused a request the service needed (network, 5xx, bad token). */
export const CodeHostUnavailable = defineError(
  "codehost_unavailable",
  502,
  "The code host did not answer the request",
);

/** Retry and rate-limit policy for the code host; defaults below, tests shorten the waits. */
export interface CodeHostPolicy {
  /** Retries after the first attempt for 5xx answers and network errors. */
  readonly retries: number;
  /** The n-th retry waits n² × this many milliseconds (1 s, 4 s, 9 s by default). */
  readonly retryBaseDelayMs: number;
  /** When the rate limit is exhausted, wait for its reset only if it comes within this many seconds. */
  readonly maxRateLimitWaitSeconds: number;
  /** Upper bound of one request (headers and body) when the caller gives no signal of its own. */
  readonly requestTimeoutMs: number;
}

export const DEFAULT_CODEHOST_POLICY: CodeHostPolicy = {
  retries: 3,
  retryBaseDelayMs: 1_000,
  maxRateLimitWaitSeconds: 60,
  requestTimeoutMs: 30_000,
};

export interface GithubClientOptions {
  /** `https://api.github.com`, a GitHub Enterprise `https://host/api/v3`, or a local stub. */
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly logger: Logger;
  readonly policy?: Partial<CodeHostPolicy>;
  readonly userAgent?: string;
}

/** A repository as the code host knows it, with its canonical spelling. */
export interface CodeHostRepository {
  readonly owner: string;
  readonly name: string;
  readonly fullName: string;
  readonly defaultBranch: string;
  readonly private: boolean;
}

/** The core REST rate limit; `reset` is in epoch seconds. */
export interface RateLimit {
  readonly limit: number;
  readonly remaining: number;
  readonly used: number;
  readonly reset: number;
}

// The plugins add no REST methods, so the instance keeps the plain Octokit type.
const RetryingOctokit: typeof Octokit = Octokit.plugin(retry, throttling);

/** The HTTP status of an Octokit `RequestError` (its class is not exported by @octokit/rest). */
function statusOf(error: unknown): number | undefined {
  if (error instanceof Error && error.name === "HttpError" && "status" in error) {
    return typeof error.status === "number" ? error.status : undefined;
  }
  return undefined;
}

/**
 * The narrow adapter over the code host's REST API. Each method is one question the service
 * asks; add a method here for each new question (never hand the Octokit instance out).
 * 404 answers become `null` where absence is an expected answer; other failures become
 * `CodeHostUnavailable`.
 */
export class GithubClient {
  protected readonly octokit: Octokit;
  protected readonly logger: Logger;

  constructor(options: GithubClientOptions) {
    const policy = { ...DEFAULT_CODEHOST_POLICY, ...options.policy };
    const logger = options.logger;
    this.logger = logger;
    this.octokit = new RetryingOctokit({
      baseUrl: options.baseUrl,
      ...(options.token ? { auth: options.token } : {}),
      userAgent: options.userAgent ?? "rd-delivery",
      log: {
        debug: (message) => logger.debug(message),
        info: (message) => logger.debug(message),
        warn: (message) => logger.warn(message),
        error: (message) => logger.error(message),
      },
      request: {
        fetch: (url: string | URL, init: RequestInit = {}) =>
          fetch(url, {
            ...init,
            signal: init.signal ?? AbortSignal.timeout(policy.requestTimeoutMs),
          }),
      },
      retry: { retries: policy.retries, retryAfterBaseValue: policy.retryBaseDelayMs },
      throttle: {
        onRateLimit: (retryAfter, request, _octokit, retryCount) => {
          const wait = retryCount === 0 && retryAfter <= policy.maxRateLimitWaitSeconds;
          logger.warn("code host rate limit exhausted", {
            method: request.method,
            url: request.url,
            retry_after_seconds: retryAfter,
            waiting: wait,
          });
          return wait;
        },
        onSecondaryRateLimit: (retryAfter, request, _octokit, retryCount) => {
          const wait = retryCount === 0 && retryAfter <= policy.maxRateLimitWaitSeconds;
          logger.warn("code host secondary rate limit hit", {
            method: request.method,
            url: request.url,
            retry_after_seconds: retryAfter,
            waiting: wait,
          });
          return wait;
        },
      },
    });
  }

  /** The repository, or null when the code host does not know it (or hides it from us). */
  async getRepository(owner: string, name: string): Promise<CodeHostRepository | null> {
    const data = await this.orNullOn404(() => this.octokit.rest.repos.get({ owner, repo: name }));
    if (data === null) return null;
    return {
      owner: data.owner.login,
      name: data.name,
      fullName: data.full_name,
      defaultBranch: data.default_branch,
      private: data.private,
    };
  }

  /**
   * The core REST rate limit of our token (this call does not count against it). Not retried:
   * it is informational and answers a public status request that should not hang.
   */
  async getRateLimit(): Promise<RateLimit> {
    const { rate } = await this.call(() =>
      this.octokit.rest.rateLimit.get({ request: { retries: 0 } }),
    );
    return { limit: rate.limit, remaining: rate.remaining, used: rate.used, reset: rate.reset };
  }

  /** Runs one API call; failures become `CodeHostUnavailable` carrying the status. */
  protected async call<T>(request: () => Promise<{ data: T }>): Promise<T> {
    try {
      return (await request()).data;
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  /** Like `call`, but a 404 answer is `null`. */
  protected async orNullOn404<T>(request: () => Promise<{ data: T }>): Promise<T | null> {
    try {
      return (await request()).data;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw this.unavailable(error);
    }
  }

  protected unavailable(error: unknown) {
    const status = statusOf(error);
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn("code host request failed", { status, reason });
    return CodeHostUnavailable(
      status ? `The code host answered ${status}` : "The code host could not be reached",
      { status },
    );
  }
}
