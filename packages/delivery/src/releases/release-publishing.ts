import { extname } from "node:path";
import type { CodeHostRelease } from "../codehost/code-host.js";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import type { ArtifactRule, PublishRule } from "./declaration.js";
import { objectUrl, type Placement, targetsFor, versionOf } from "./destinations.js";
import type { ProcessingContext } from "./processing-context.js";
import { attemptPublish, PublishFailure, throwIfLost } from "./publish-attempts.js";
import type { PublishPlan } from "./publish-plan.js";
import { type PublishedFile, type PublishTarget, publishFile, publishZip } from "./publisher.js";
import type { ProcessedFile, ResultPart } from "./release-result.js";

/**
 * Small binary assets (known size up to this) are published a few at once: for them the
 * round trips, not the bytes, take the time. Larger ones and zips go one at a time, so memory
 * stays bounded by one upload's buffers (see s3-store.ts) whatever the release holds.
 */
const SMALL_ASSET_BYTES = 8 * 1024 * 1024;
const SMALL_ASSET_CONCURRENCY = 4;

type PublishingContext = Pick<ProcessingContext, "host" | "clock" | "logger" | "policy">;

/** What publishing the files of a release gave, in declaration order. */
export interface Publishing {
  readonly parts: readonly ResultPart[];
  /** Every file written, for the checksums and manifests of its folders. */
  readonly files: readonly PublishedFile[];
  /** A download or storage failure (or the claim lost) stopped it: the release is `failed`. */
  readonly stopped: boolean;
}

/** Consecutive small binaries grouped (up to the concurrency); everything else alone. */
function artifactBatches(
  artifacts: readonly ArtifactRule[],
  release: CodeHostRelease,
): ArtifactRule[][] {
  const batches: ArtifactRule[][] = [];
  let small: ArtifactRule[] = [];
  for (const artifact of artifacts) {
    const size = release.assets.find((asset) => asset.name === artifact.source)?.size;
    if (artifact.type === "binary" && size !== undefined && size <= SMALL_ASSET_BYTES) {
      small.push(artifact);
      if (small.length === SMALL_ASSET_CONCURRENCY) {
        batches.push(small);
        small = [];
      }
      continue;
    }
    if (small.length > 0) batches.push(small);
    small = [];
    batches.push([artifact]);
  }
  if (small.length > 0) batches.push(small);
  return batches;
}

function processedEntry(target: PublishTarget, file: PublishedFile): ProcessedFile {
  return {
    file: file.file,
    size: file.size,
    sha256: file.sha256,
    versioned_url: objectUrl(target.placement.deliveryUrl, file.targets.versionedKey),
    latest_url: objectUrl(target.placement.deliveryUrl, file.targets.latestKey),
  };
}

/** One declared file's (or zip's) part of the result, and the files it wrote. */
interface Published {
  readonly part: ResultPart;
  readonly files: readonly PublishedFile[];
}

function resolvedDestination(rule: PublishRule, placement: Placement): string {
  return rule.destination.replaceAll("{version}", versionOf(placement.tag));
}

async function publishArtifact(
  context: PublishingContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
  target: PublishTarget,
  artifact: ArtifactRule,
  claimLost: AbortSignal,
): Promise<Published> {
  const asset = release.assets.find((candidate) => candidate.name === artifact.source);
  if (!asset) {
    const missing = `artifact ${artifact.source}: no such asset in release ${release.tag}`;
    return { part: { errors: [missing] }, files: [] };
  }
  // A lost claim cuts the download in flight: nothing of it is written.
  const download = () =>
    context.host.downloadAsset(repository.owner, repository.name, asset.id, claimLost);
  const what = `artifact ${artifact.source}`;
  const destination = resolvedDestination(artifact, target.placement);
  const folder = targetsFor(artifact, target.placement);
  if (artifact.type === "zip") {
    const zip = await attemptPublish(context, what, claimLost, async () =>
      publishZip(target, artifact, (await download()).body),
    );
    const part: ResultPart = {
      processed: zip.files.map((file) => processedEntry(target, file)),
      errors: zip.refused.map((refusal) => `${what}: ${refusal}`),
      artifacts: [
        {
          file: artifact.source,
          destination,
          type: "zip",
          size: zip.size,
          latest_url: folder.latestKey
            ? `${objectUrl(target.placement.deliveryUrl, folder.latestKey)}/`
            : null,
        },
      ],
    };
    return { part, files: zip.files };
  }
  const file = await attemptPublish(context, what, claimLost, async () => {
    const { body, size } = await download();
    return publishFile(target, artifact, body, size ?? undefined);
  });
  const part: ResultPart = {
    processed: [processedEntry(target, file)],
    artifacts: [
      {
        file: artifact.source,
        destination,
        type: "binary",
        size: file.size,
        latest_url: objectUrl(target.placement.deliveryUrl, file.targets.latestKey),
      },
    ],
  };
  return { part, files: [file] };
}

async function publishDoc(
  context: PublishingContext,
  repository: WatchedRepository,
  tag: string,
  target: PublishTarget,
  doc: PublishRule,
  claimLost: AbortSignal,
): Promise<Published> {
  const file = await attemptPublish(context, `doc ${doc.source}`, claimLost, async () => {
    const found = await context.host.getFileAtRef(
      repository.owner,
      repository.name,
      doc.source,
      tag,
    );
    return found ? publishFile(target, doc, found.body, found.size ?? undefined) : null;
  });
  if (!file) {
    return {
      part: { errors: [`doc ${doc.source}: not found in the repository at ${tag}`] },
      files: [],
    };
  }
  const part: ResultPart = {
    processed: [processedEntry(target, file)],
    documentation: [
      {
        type: extname(doc.source).replace(/^\./, ""),
        file: doc.source,
        destination: resolvedDestination(doc, target.placement),
        latest_url: objectUrl(target.placement.deliveryUrl, file.targets.latestKey),
      },
    ],
  };
  return { part, files: [file] };
}

/**
 * Streams every declared artifact and doc of `release` to the plan's target. A failure that
 * retrying did not cure stops it (what was published before stays in its parts); so does a
 * lost claim, before its next write.
 */
export async function publishRelease(
  context: PublishingContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
  plan: PublishPlan,
  claimLost: AbortSignal,
): Promise<Publishing> {
  const { declaration, target } = plan;
  const parts: ResultPart[] = [];
  const files: PublishedFile[] = [];
  const keep = (published: Published) => {
    parts.push(published.part);
    files.push(...published.files);
  };
  try {
    for (const batch of artifactBatches(declaration.artifacts, release)) {
      const settled = await Promise.allSettled(
        batch.map((artifact) =>
          publishArtifact(context, repository, release, target, artifact, claimLost),
        ),
      );
      // The parts of a batch are kept in declaration order, whatever finished first.
      for (const outcome of settled) if (outcome.status === "fulfilled") keep(outcome.value);
      const failure = settled.find((outcome) => outcome.status === "rejected");
      if (failure) throw failure.reason;
    }
    for (const doc of declaration.docs) {
      keep(await publishDoc(context, repository, release.tag, target, doc, claimLost));
    }
    // Nor is `latest/` cleaned nor are versions pruned under a claim no longer ours.
    throwIfLost(claimLost);
  } catch (error) {
    if (!(error instanceof PublishFailure)) throw error;
    return { parts: [...parts, { errors: [error.message] }], files, stopped: true };
  }
  return { parts, files, stopped: false };
}
