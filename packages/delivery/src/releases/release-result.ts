import { deepFreeze } from "@rd/common";
import { type Static, Type } from "@rd/common/typebox";
import type { HistoryRecord } from "./history-repository.js";

const NullableString = Type.Union([Type.String(), Type.Null()]);

/** One object (or versioned + latest pair) written for a release. */
export const ProcessedFile = Type.Object({
  file: Type.String(),
  size: Type.Integer(),
  /** Hex SHA-256 of the file's bytes (the line of `SHA256SUMS` and `manifest.json`). */
  sha256: Type.String(),
  versioned_url: NullableString,
  latest_url: NullableString,
});
export type ProcessedFile = Static<typeof ProcessedFile>;

/** A declared artifact as published. */
export const PublishedArtifact = Type.Object({
  file: Type.String(),
  destination: Type.String(),
  type: Type.Union([Type.Literal("binary"), Type.Literal("zip")]),
  size: Type.Integer(),
  latest_url: NullableString,
});
export type PublishedArtifact = Static<typeof PublishedArtifact>;

/** A declared doc as published. */
export const PublishedDoc = Type.Object({
  type: Type.String(),
  file: Type.String(),
  destination: Type.String(),
  latest_url: NullableString,
});
export type PublishedDoc = Static<typeof PublishedDoc>;

/**
 * The "Release processing result" of the specification (check, reprocess, webhook): the wire
 * schema and its type. Built once, by `buildResult`, and frozen; the stages work on `ResultPart`.
 */
export const ReleaseResult = Type.Object({
  repository: Type.String(),
  tag: Type.String(),
  processed: Type.Array(ProcessedFile),
  artifacts: Type.Array(PublishedArtifact),
  documentation: Type.Array(PublishedDoc),
  skipped: Type.Array(Type.String()),
  errors: Type.Array(Type.String()),
});
export type ReleaseResult = Static<typeof ReleaseResult>;

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

/** The "Dry-run listing" of the specification: every release, nothing processed. */
export const DryRunListing = Type.Object({
  repository: Type.String(),
  total_releases: Type.Integer(),
  releases: Type.Array(
    Type.Object({
      tag: Type.String(),
      name: Type.String(),
      created_at: Type.String(),
      prerelease: Type.Boolean(),
      draft: Type.Boolean(),
      assets_count: Type.Integer(),
      assets: Type.Array(
        Type.Object({ name: Type.String(), size: Type.Integer(), download_url: Type.String() }),
      ),
    }),
  ),
});
export type DryRunListing = Static<typeof DryRunListing>;

/** A repository whose check or listing failed, in a check-all or dry-run-all answer. */
export const RepositoryError = Type.Object({ repository: Type.String(), error: Type.String() });
export type RepositoryError = Static<typeof RepositoryError>;

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
