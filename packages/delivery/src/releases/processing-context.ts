import type { KeyObject } from "node:crypto";
import type { Clock, Logger } from "@rd/common";
import type { ReleaseSource, RepositoryLookup } from "../codehost/code-host.js";
import {
  DEFAULT_LATEST_MAX_AGE_SECONDS,
  DEFAULT_PUBLISH_CONCURRENCY,
  DEFAULT_RELEASE_CLAIM_LEASE_SECONDS,
} from "../config.js";
import type { StorageProviders } from "../storage/storage-providers.js";
import type { LocationClaim, StorageLocation } from "./location-repository.js";

/** The code-host questions processing asks. */
export type ReleaseHost = ReleaseSource & RepositoryLookup;

export interface ProcessingPolicy {
  /**
   * A claim older than this belongs to an instance presumed dead and may be taken over. A live
   * publish renews its claim every third of it.
   */
  readonly staleClaimMs: number;
  /** Waits between attempts of one download+upload; attempts = length + 1. */
  readonly retryDelaysMs: readonly number[];
  /** `.delivery.yml` larger than this is refused (it is read into memory to parse). */
  readonly maxDeclarationBytes: number;
  /** `max-age` of the objects of `latest/` and prerelease channels (LATEST_MAX_AGE_SECONDS). */
  readonly latestMaxAgeSeconds: number;
  /** Small files (assets up to 2 MiB, docs) published at once (PUBLISH_CONCURRENCY). */
  readonly transferConcurrency: number;
}

export const DEFAULT_PROCESSING_POLICY: ProcessingPolicy = {
  // RELEASE_CLAIM_LEASE_SECONDS's default; documented in the README (Publishing).
  staleClaimMs: DEFAULT_RELEASE_CLAIM_LEASE_SECONDS * 1000,
  // A fresh signed URL is asked for on every attempt.
  retryDelaysMs: [1_000, 5_000],
  maxDeclarationBytes: 256 * 1024,
  latestMaxAgeSeconds: DEFAULT_LATEST_MAX_AGE_SECONDS,
  transferConcurrency: DEFAULT_PUBLISH_CONCURRENCY,
};

/** Who may publish where: a location belongs to the first repository that publishes there. */
export interface LocationClaims {
  claim(location: StorageLocation, repositoryId: number, now: Date): Promise<LocationClaim>;
}

/** What the stages of processing a release work with; each stage takes the few it uses. */
export interface ProcessingContext {
  readonly host: ReleaseHost;
  readonly locations: LocationClaims;
  readonly storage: StorageProviders;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Folder for zip archives while their entries are published. */
  readonly tempDir: string;
  readonly policy: ProcessingPolicy;
  /** Signs each `SHA256SUMS` written (`RELEASE_SIGNING_KEY`, Ed25519); none: unsigned. */
  readonly signingKey?: KeyObject | undefined;
}
