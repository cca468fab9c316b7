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
 * Binary assets of a known size up to this, and docs, are published several at once (up to
 * the policy's `transferConcurrency`): for them the round trips, not the bytes, take the time.
 * Larger assets and zips go alone, so memory stays bounded by one upload's buffers (and on S3
 * by the store's shared send budget, see s3-uploads.ts) whatever the release holds, plus at
 * most this much per small transfer.
 */
const SMALL_ASSET_BYTES = 2 * 1024 * 1024;

type PublishingContext = Pick<ProcessingContext, "host" | "clock" | "logger" | "policy">;

/** What publishing the files of a release gave, in declaration order. */
export interface Publishing {
  readonly parts: readonly ResultPart[];
  /** Every file written, for the checksums and manifests of its folders. */
  readonly files: readonly PublishedFile[];
  /** A download or storage failure (or the claim lost) stopped it: the release is `failed`. */
  readonly stopped: boolean;
}

/** One declared file's publication, and whether it may run beside others. */
interface Transfer {
  readonly run: () => Promise<Published>;
  readonly small: boolean;
}

/**
 * Runs the transfers in declaration order: small ones up to `concurrency` at once, a large one
 * alone (after those in flight). After a failure none starts; those in flight finish. The
 * results are in declaration order, whatever finished first.
 */
async function runTransfers(
  transfers: readonly Transfer[],
  concurrency: number,
): Promise<{ readonly done: readonly Published[]; readonly failure?: { reason: unknown } }> {
  const results: Array<Published | undefined> = [];
  const inFlight = new Set<Promise<void>>();
  let failure: { reason: unknown } | undefined;
  const start = (index: number, transfer: Transfer) => {
    const running: Promise<void> = transfer
      .run()
      .then(
        (published) => {
          results[index] = published;
        },
        (reason: unknown) => {
          failure ??= { reason };
        },
      )
      .finally(() => inFlight.delete(running));
    inFlight.add(running);
  };
  for (const [index, transfer] of transfers.entries()) {
    const limit = transfer.small ? concurrency : 1;
    while (inFlight.size >= limit) await Promise.race(inFlight);
    if (failure) break;
    start(index, transfer);
    if (!transfer.small) await Promise.all(inFlight);
  }
  await Promise.all(inFlight);
  const done = results.filter((published) => published !== undefined);
  return failure ? { done, failure } : { done };
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
  const transfers: Transfer[] = [
    ...declaration.artifacts.map((artifact) => {
      const size = release.assets.find((asset) => asset.name === artifact.source)?.size;
      return {
        run: () => publishArtifact(context, repository, release, target, artifact, claimLost),
        small: artifact.type === "binary" && size !== undefined && size <= SMALL_ASSET_BYTES,
      };
    }),
    ...declaration.docs.map((doc) => ({
      run: () => publishDoc(context, repository, release.tag, target, doc, claimLost),
      small: true,
    })),
  ];
  try {
    const { done, failure } = await runTransfers(transfers, context.policy.transferConcurrency);
    for (const published of done) keep(published);
    if (failure) throw failure.reason;
    // Nor is `latest/` cleaned nor are versions pruned under a claim no longer ours.
    throwIfLost(claimLost);
  } catch (error) {
    if (!(error instanceof PublishFailure)) throw error;
    return { parts: [...parts, { errors: [error.message] }], files, stopped: true };
  }
  return { parts, files, stopped: false };
}
