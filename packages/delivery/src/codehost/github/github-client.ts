import type { Octokit } from "@octokit/rest";
import type { Logger } from "@rd/common";
import { WebhookExists, WebhookRejected } from "../../errors.js";
import type {
  CodeHost,
  CodeHostDownload,
  CodeHostHook,
  CodeHostHookSpec,
  CodeHostRelease,
  CodeHostRepository,
  RateLimit,
} from "../code-host.js";
import { type ReleaseData, toHook, toRelease } from "./github-data.js";
import { type AssetContext, fileAtRef, releaseAsset } from "./github-downloads.js";
import {
  type CodeHostPolicy,
  createOctokit,
  DEFAULT_CODEHOST_POLICY,
  type OctokitOptions,
  requestFailure,
  statusOf,
} from "./github-octokit.js";
import { rateLimitOf } from "./rate-limit.js";

export interface GithubClientOptions {
  /** `https://api.github.com`, a GitHub Enterprise `https://host/api/v3`, or a local stub. */
  readonly baseUrl: string;
  readonly token: string | undefined;
  readonly logger: Logger;
  readonly policy?: Partial<CodeHostPolicy>;
  readonly userAgent?: string;
}

/**
 * The narrow adapter over the code host's REST API. Each method is one question the service
 * asks; add a method here for each new question (never hand the Octokit instance out).
 * 404 answers become `null` where absence is an expected answer; other failures become
 * `CodeHostUnavailable`.
 */
export class GithubClient implements CodeHost {
  private readonly octokitOptions: OctokitOptions;
  private octokitMade: Promise<Octokit> | undefined;
  private readonly logger: Logger;
  private readonly downloads: AssetContext;

  constructor(options: GithubClientOptions) {
    const policy = { ...DEFAULT_CODEHOST_POLICY, ...options.policy };
    this.logger = options.logger;
    this.octokitOptions = {
      baseUrl: options.baseUrl,
      token: options.token,
      userAgent: options.userAgent ?? "rd-delivery",
      logger: options.logger,
      policy,
    };
    this.downloads = {
      rest: this.octokitOptions,
      logger: options.logger,
      requestTimeoutMs: policy.requestTimeoutMs,
      downloadIdleTimeoutMs: policy.downloadIdleTimeoutMs,
    };
  }

  /** The repository, or null when the code host does not know it (or hides it from us). */
  async getRepository(owner: string, name: string): Promise<CodeHostRepository | null> {
    const data = await this.orNullOn404((octokit) => octokit.rest.repos.get({ owner, repo: name }));
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
    const data: unknown = await this.call((octokit) =>
      octokit.rest.rateLimit.get({ request: { retries: 0 } }),
    );
    return rateLimitOf(data);
  }

  /** The newest published release (never a draft or prerelease), or null when there is none. */
  async getLatestRelease(owner: string, name: string): Promise<CodeHostRelease | null> {
    const data = await this.orNullOn404((octokit) =>
      octokit.rest.repos.getLatestRelease({ owner, repo: name }),
    );
    return data === null ? null : toRelease(data as ReleaseData);
  }

  /** The release of `tag`, or null when the tag has no (published) release. */
  async getReleaseByTag(owner: string, name: string, tag: string): Promise<CodeHostRelease | null> {
    const data = await this.orNullOn404((octokit) =>
      octokit.rest.repos.getReleaseByTag({ owner, repo: name, tag }),
    );
    return data === null ? null : toRelease(data as ReleaseData);
  }

  /** Every release, newest first, following pagination to the last page; null for an unknown repository. */
  async listReleases(owner: string, name: string): Promise<CodeHostRelease[] | null> {
    try {
      const octokit = await this.octokit();
      const releases = await octokit.paginate(octokit.rest.repos.listReleases, {
        owner,
        repo: name,
        per_page: 100,
      });
      return releases.map((release) => toRelease(release as ReleaseData));
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw this.unavailable(error);
    }
  }

  /** The raw bytes of a repository file at `ref` (a tag), streamed; null when it does not exist. */
  async getFileAtRef(
    owner: string,
    name: string,
    path: string,
    ref: string,
  ): Promise<CodeHostDownload | null> {
    return fileAtRef({ ...this.downloads, octokit: await this.octokit() }, owner, name, path, ref);
  }

  /** Streams a release asset (see `releaseAsset`); `signal` cuts it wherever it is. */
  async downloadAsset(
    owner: string,
    name: string,
    assetId: number,
    signal?: AbortSignal,
  ): Promise<CodeHostDownload> {
    return releaseAsset(this.downloads, owner, name, assetId, signal);
  }

  // ---- Webhooks ----

  /** Creates a JSON webhook signed with `secret`; null when the repository is unknown to us. */
  async createHook(
    owner: string,
    name: string,
    hook: CodeHostHookSpec,
  ): Promise<CodeHostHook | null> {
    try {
      const { data } = await (await this.octokit()).rest.repos.createWebhook({
        owner,
        repo: name,
        name: "web",
        active: true,
        events: [...hook.events],
        config: { url: hook.url, content_type: "json", secret: hook.secret, insecure_ssl: "0" },
      });
      return toHook(data);
    } catch (error) {
      const status = statusOf(error);
      // NOTE: GitHub answers 404, not 403, when the token may not administer the repository.
      if (status === 404) return null;
      if (status === 422) {
        const reason = error instanceof Error ? error.message : "";
        throw /already exists/i.test(reason)
          ? WebhookExists(`A webhook to ${hook.url} already exists on ${owner}/${name}`)
          : WebhookRejected(`The code host refused the webhook for ${owner}/${name}`);
      }
      throw this.unavailable(error);
    }
  }

  /** Every webhook of the repository (all pages); null when the repository is unknown to us. */
  async listHooks(owner: string, name: string): Promise<CodeHostHook[] | null> {
    try {
      const octokit = await this.octokit();
      const hooks = await octokit.paginate(octokit.rest.repos.listWebhooks, {
        owner,
        repo: name,
        per_page: 100,
      });
      return hooks.map(toHook);
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw this.unavailable(error);
    }
  }

  /** False when the repository or the hook is unknown. */
  async deleteHook(owner: string, name: string, id: number): Promise<boolean> {
    const deleted = await this.orNullOn404((octokit) =>
      octokit.rest.repos.deleteWebhook({ owner, repo: name, hook_id: id }),
    );
    return deleted !== null;
  }

  /** The Octokit, made at the first question: an idle service does not load it. */
  private octokit(): Promise<Octokit> {
    this.octokitMade ??= createOctokit(this.octokitOptions);
    return this.octokitMade;
  }

  /** Runs one API call; failures become `CodeHostUnavailable` carrying the status. */
  private async call<T>(request: (octokit: Octokit) => Promise<{ data: T }>): Promise<T> {
    try {
      return (await request(await this.octokit())).data;
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  /** Like `call`, but a 404 answer is `null`. */
  private async orNullOn404<T>(
    request: (octokit: Octokit) => Promise<{ data: T }>,
  ): Promise<T | null> {
    try {
      return (await request(await this.octokit())).data;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw this.unavailable(error);
    }
  }

  private unavailable(error: unknown) {
    return requestFailure(this.logger, error);
  }
}
