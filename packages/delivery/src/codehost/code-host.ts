import type { Readable } from "node:stream";

// The code host as the delivery domain sees it: the questions the services ask, in the
// domain's own types. GitHub (codehost/github/) is one adapter; a consumer types against the
// narrow interface it uses, never against an adapter class.
//
// Absence that is an expected answer (a repository, release, file or hook that does not exist)
// is `null`; every other failure is thrown as a domain error from errors.ts
// (`CodeHostUnavailable`, and `WebhookExists`/`WebhookRejected` from `createHook`), so a
// consumer decides by error code, never by the code host's HTTP status.

/** A repository as the code host knows it, with its canonical spelling. */
export interface CodeHostRepository {
  readonly owner: string;
  readonly name: string;
  readonly fullName: string;
  readonly defaultBranch: string;
  readonly private: boolean;
}

/** A file attached to a release. */
export interface CodeHostAsset {
  readonly id: number;
  readonly name: string;
  readonly size: number;
  readonly contentType: string;
  /** The public browser download address (shown in dry-run listings). */
  readonly downloadUrl: string;
}

/** A release as the code host describes it. */
export interface CodeHostRelease {
  readonly id: number;
  readonly tag: string;
  readonly name: string;
  readonly draft: boolean;
  readonly prerelease: boolean;
  readonly createdAt: string;
  readonly publishedAt: string | null;
  readonly assets: readonly CodeHostAsset[];
}

/** A body being downloaded; `size` when the server announced it. */
export interface CodeHostDownload {
  readonly body: Readable;
  readonly size: number | null;
}

/** A webhook as the code host reports it. */
export interface CodeHostHook {
  readonly id: number;
  readonly active: boolean;
  readonly events: readonly string[];
  readonly config: { readonly url: string | null; readonly contentType: string | null };
  readonly createdAt: string;
}

/** A webhook to create: JSON deliveries of `events` to `url`, signed with `secret`. */
export interface CodeHostHookSpec {
  readonly url: string;
  readonly secret: string;
  readonly events: readonly string[];
}

/**
 * The core REST rate limit; `reset` is in epoch seconds. A field the code host left out or sent
 * malformed is null: unknown, never a failure of the reader.
 */
export interface RateLimit {
  readonly limit: number | null;
  readonly remaining: number | null;
  readonly used: number | null;
  readonly reset: number | null;
}

/** Looking a repository up (registration, and telling a repository gone from an empty one). */
export interface RepositoryLookup {
  /** The repository, or null when the code host does not know it (or hides it from us). */
  getRepository(owner: string, name: string): Promise<CodeHostRepository | null>;
}

/** What release processing reads from the code host. */
export interface ReleaseSource {
  /**
   * The newest published release (never a draft or prerelease); null when there is none or
   * the repository is unknown.
   */
  getLatestRelease(owner: string, name: string): Promise<CodeHostRelease | null>;
  /** The release of `tag`; null when the tag has no (published) release or the repository is unknown. */
  getReleaseByTag(owner: string, name: string, tag: string): Promise<CodeHostRelease | null>;
  /** Every release, newest first (all pages); null for an unknown repository. */
  listReleases(owner: string, name: string): Promise<CodeHostRelease[] | null>;
  /** The raw bytes of a repository file at `ref` (a tag), streamed; null when it does not exist. */
  getFileAtRef(
    owner: string,
    name: string,
    path: string,
    ref: string,
  ): Promise<CodeHostDownload | null>;
  /**
   * Streams a release asset; each call asks afresh, so a retry never reuses a stale address.
   * `signal` cuts the download wherever it is (the body then fails like a broken-off one).
   */
  downloadAsset(
    owner: string,
    name: string,
    assetId: number,
    signal?: AbortSignal,
  ): Promise<CodeHostDownload>;
}

/** Administering the webhooks that deliver release events to this service. */
export interface HookAdministration {
  /**
   * The created hook, or null when the repository is unknown (or not ours to administer);
   * `WebhookExists` or `WebhookRejected` when the code host refuses it.
   */
  createHook(owner: string, name: string, hook: CodeHostHookSpec): Promise<CodeHostHook | null>;
  /** Every hook of the repository (all pages), or null when the repository is unknown. */
  listHooks(owner: string, name: string): Promise<CodeHostHook[] | null>;
  /** False when the repository or the hook is unknown. */
  deleteHook(owner: string, name: string, id: number): Promise<boolean>;
}

/** Reading our own rate limit (status page). */
export interface RateLimitSource {
  /** The core REST rate limit of our credentials; not retried (it answers a status request). */
  getRateLimit(): Promise<RateLimit>;
}

/** Everything the service asks the code host: what an adapter implements. */
export interface CodeHost
  extends RepositoryLookup,
    ReleaseSource,
    HookAdministration,
    RateLimitSource {}
