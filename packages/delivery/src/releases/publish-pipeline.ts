import type { CodeHostRelease } from "../codehost/code-host.js";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import type { StorageProvider } from "../storage/object-store.js";
import { readDeclaration } from "./declaration-reader.js";
import type { HistoryStatus } from "./history-repository.js";
import type { ProcessingContext } from "./processing-context.js";
import { planPublish } from "./publish-plan.js";
import { pruneOldVersions, removeStaleLatest } from "./release-cleanup.js";
import { writeManifests } from "./release-manifest.js";
import { publishRelease } from "./release-publishing.js";
import { joinParts, type ResultPart } from "./release-result.js";

/** How publishing a claimed release ended, and what each stage added to its result. */
export interface PipelineOutcome {
  readonly status: HistoryStatus;
  readonly parts: readonly ResultPart[];
  /** Where the files went; absent when publishing stopped before a store was chosen. */
  readonly provider?: StorageProvider;
}

/**
 * The stages of publishing a claimed release, in order: read `.delivery.yml` at the tag; plan
 * (latest or not, where, whose location); publish every file with retries; write the
 * checksums and manifest of each folder written to; then, after a complete publish, clean
 * `latest/` and prune old versions. A stage that leaves nothing to
 * publish ends it `failed`; errors past planning make it `partial`. Stops before its next
 * write once `claimLost` aborts.
 */
export async function runPublishPipeline(
  context: ProcessingContext,
  repository: WatchedRepository,
  release: CodeHostRelease,
  /** True when `release` is known to be the latest; otherwise the code host is asked. */
  knownLatest: boolean,
  claimLost: AbortSignal,
): Promise<PipelineOutcome> {
  const { host, policy } = context;
  const read = await readDeclaration(host, repository, release.tag, policy.maxDeclarationBytes);
  if (!read.ok) return { status: "failed", parts: [{ errors: read.errors }] };
  const planning = await planPublish(context, repository, release, read.declaration, knownLatest);
  if (!planning.ok) return { status: "failed", parts: [planning.part] };
  const { plan } = planning;
  const { provider } = plan.target.store;

  const publishing = await publishRelease(context, repository, release, plan, claimLost);
  if (publishing.stopped) {
    return { status: "failed", parts: [planning.part, ...publishing.parts], provider };
  }
  const manifests = await writeManifests(
    plan.target,
    publishing.files,
    { repository: repository.fullName, release },
    context.signingKey,
  );
  const published = [planning.part, ...publishing.parts, manifests];

  const sofar = joinParts(published);
  const cleanup =
    plan.cleansLatest && sofar.errors.length === 0
      ? await removeStaleLatest(plan.target, sofar.processed)
      : {};
  const pruning =
    plan.keepVersions === null
      ? {}
      : await pruneOldVersions(
          context,
          repository,
          plan.target,
          plan.keepVersions,
          plan.declaration.publish.prereleaseChannel,
        );
  const parts = [...published, cleanup, pruning];
  return { status: joinParts(parts).errors.length > 0 ? "partial" : "success", parts, provider };
}
