import { deepFreeze } from "@rd/common";
import type { HistoryRecord } from "./history-repository.js";

/** One object (or versioned + latest pair) written for a release. */
export interface ProcessedFile {
  readonly file: string;
  readonly size: number;
  readonly versioned_url: string | null;
  readonly latest_url: string | null;
}

/** A declared artifact as published. */
export interface PublishedArtifact {
  readonly file: string;
  readonly destination: string;
  readonly type: "binary" | "zip";
  readonly size: number;
  readonly latest_url: string | null;
}

/** A declared doc as published. */
export interface PublishedDoc {
  readonly type: string;
  readonly file: string;
  readonly destination: string;
  readonly latest_url: string | null;
}

/**
 * The "Release processing result" of the specification (check, reprocess, webhook). Built once,
 * by `buildResult`, and frozen. NOTE: its lists are typed mutable only because Fastify's reply
 * types (from the TypeBox schema) take no readonly arrays; the stages work on `ResultPart`.
 */
export interface ReleaseResult {
  readonly repository: string;
  readonly tag: string;
  readonly processed: ProcessedFile[];
  readonly artifacts: PublishedArtifact[];
  readonly documentation: PublishedDoc[];
  readonly skipped: string[];
  readonly errors: string[];
}

/** What one stage of a processing contributes to its result; missing lists add nothing. */
export interface ResultPart {
  readonly processed?: readonly ProcessedFile[];
  readonly artifacts?: readonly PublishedArtifact[];
  readonly documentation?: readonly PublishedDoc[];
  readonly skipped?: readonly string[];
  readonly errors?: readonly string[];
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

/** The parts joined in order (each list concatenated, into new arrays). */
export function joinParts(parts: readonly ResultPart[]): Required<ResultPart> {
  return {
    processed: parts.flatMap((part) => part.processed ?? []),
    artifacts: parts.flatMap((part) => part.artifacts ?? []),
    documentation: parts.flatMap((part) => part.documentation ?? []),
    skipped: parts.flatMap((part) => part.skipped ?? []),
    errors: parts.flatMap((part) => part.errors ?? []),
  };
}

/** The result of a release, built once from the parts its stages returned, in order. */
export function buildResult(
  repository: string,
  tag: string,
  parts: readonly ResultPart[],
): ReleaseResult {
  const joined = joinParts(parts);
  return deepFreeze({
    repository,
    tag,
    processed: [...joined.processed],
    artifacts: [...joined.artifacts],
    documentation: [...joined.documentation],
    skipped: [...joined.skipped],
    errors: [...joined.errors],
  });
}
