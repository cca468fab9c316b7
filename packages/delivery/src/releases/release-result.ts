import type { HistoryRecord } from "./history-repository.js";

/** The "Release processing result" of the specification (check, reprocess, webhook). */
export interface ReleaseResult {
  repository: string;
  tag: string;
  processed: Array<{
    file: string;
    size: number;
    versioned_url: string | null;
    latest_url: string | null;
  }>;
  artifacts: Array<{
    file: string;
    destination: string;
    type: "binary" | "zip";
    size: number;
    latest_url: string | null;
  }>;
  documentation: Array<{
    type: string;
    file: string;
    destination: string;
    latest_url: string | null;
  }>;
  skipped: string[];
  errors: string[];
}

/** What a check did with a release. */
export type Processing =
  | {
      readonly outcome: "published";
      readonly record: HistoryRecord;
      readonly result: ReleaseResult;
    }
  | {
      readonly outcome: "already_processed" | "in_progress";
      readonly result: ReleaseResult;
    };

/** The "Dry-run listing" of the specification. */
export interface DryRunListing {
  repository: string;
  total_releases: number;
  releases: Array<{
    tag: string;
    name: string;
    created_at: string;
    prerelease: boolean;
    draft: boolean;
    assets_count: number;
    assets: Array<{ name: string; size: number; download_url: string }>;
  }>;
}

/** A result with nothing in it yet. */
export function emptyResult(repository: string, tag: string): ReleaseResult {
  return {
    repository,
    tag,
    processed: [],
    artifacts: [],
    documentation: [],
    skipped: [],
    errors: [],
  };
}
