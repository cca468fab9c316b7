import { messageOf } from "@rd/common";
import type { WatchedRepository } from "../repositories/watched-repository-store.js";
import { floatingFolderOf, objectUrl, versionOf } from "./destinations.js";
import type { ProcessingContext } from "./processing-context.js";
import { pruneVersions } from "./pruning.js";
import type { PublishTarget } from "./publisher.js";
import type { ProcessedFile, ResultPart } from "./release-result.js";
import { RESERVED_NAMES } from "./reserved-names.js";

/**
 * After a complete publish of the latest release, `latest/` holds exactly what it declared (and
 * its checksums and manifest): files an earlier release put there (a dropped asset, a page gone
 * from a zip) are removed. The same for a prerelease channel's folder and its prerelease.
 */
export async function removeStaleLatest(
  target: PublishTarget,
  written: readonly ProcessedFile[],
): Promise<ResultPart> {
  const { deliveryUrl, folderName } = target.placement;
  const kept = new Set(written.map((file) => file.latest_url));
  const prefix = `${folderName}/${floatingFolderOf(target.placement)}/`;
  for (const name of RESERVED_NAMES) kept.add(objectUrl(deliveryUrl, prefix + name));
  try {
    const stale: string[] = [];
    for await (const object of target.store.list(target.bucket, prefix)) {
      if (!kept.has(objectUrl(deliveryUrl, object.key))) stale.push(object.key);
    }
    if (stale.length > 0) await target.store.delete(target.bucket, stale);
    return {};
  } catch (error) {
    return { errors: [`removing stale files from ${prefix} failed: ${messageOf(error)}`] };
  }
}

/** Deletes the versioned folders beyond the newest `keep`, dated by their releases. */
export async function pruneOldVersions(
  context: Pick<ProcessingContext, "host" | "logger">,
  repository: WatchedRepository,
  target: PublishTarget,
  keep: number,
  channel: string | null,
): Promise<ResultPart> {
  try {
    const releases = (await context.host.listReleases(repository.owner, repository.name)) ?? [];
    const releaseDates = new Map(
      releases.map((release) => [
        versionOf(release.tag),
        new Date(release.publishedAt ?? release.createdAt),
      ]),
    );
    const pruned = await pruneVersions({
      store: target.store,
      bucket: target.bucket,
      folderName: target.placement.folderName,
      keep,
      releaseDates,
      channel,
    });
    if (pruned.length > 0) {
      context.logger.info("old versions pruned", {
        repository: repository.fullName,
        versions: pruned.join(","),
      });
    }
    return {};
  } catch (error) {
    return { errors: [`pruning old versions failed: ${messageOf(error)}`] };
  }
}
