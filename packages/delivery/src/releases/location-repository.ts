import type { Kysely } from "@rd/common/kysely";
import { isUniqueViolation } from "../db/errors.js";
import type { Schema } from "../db/schema.js";
import type { StorageProvider } from "../storage/object-store.js";

/** Where one repository's files live: its top folder in a bucket of a provider. */
export interface StorageLocation {
  readonly provider: StorageProvider;
  readonly bucket: string;
  readonly folder: string;
}

/** Whether the repository may publish to the location, and if not, who owns it. */
export type LocationClaim =
  | { readonly owned: true }
  | { readonly owned: false; readonly owner: string };

/**
 * SQL for `storage_locations`: a location belongs to the first repository that publishes there,
 * so no declaration can name another repository's folder and overwrite or prune its files. The
 * primary key lets exactly one of two concurrent first claims insert; deleting the owning
 * repository deletes its rows (cascade), which frees its locations.
 */
export class LocationRepository {
  constructor(private readonly db: Kysely<Schema>) {}

  /** Claims `location` for the repository, or tells who owns it already. */
  async claim(location: StorageLocation, repositoryId: number, now: Date): Promise<LocationClaim> {
    // Two rounds: the owner seen after a lost insert may be deleted before we read it.
    for (let round = 0; round < 2; round++) {
      try {
        await this.db
          .insertInto("storage_locations")
          .values({
            provider: location.provider,
            bucket: location.bucket,
            folder: location.folder,
            repository_id: repositoryId,
            claimed_at: now.toISOString(),
          })
          .execute();
        return { owned: true };
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
      const owner = await this.db
        .selectFrom("storage_locations")
        .innerJoin("repositories", "repositories.id", "storage_locations.repository_id")
        .select([
          "repositories.id as id",
          "repositories.owner as owner",
          "repositories.name as name",
        ])
        .where("storage_locations.provider", "=", location.provider)
        .where("storage_locations.bucket", "=", location.bucket)
        .where("storage_locations.folder", "=", location.folder)
        .executeTakeFirst();
      if (!owner) continue;
      return Number(owner.id) === repositoryId
        ? { owned: true }
        : { owned: false, owner: `${owner.owner}/${owner.name}` };
    }
    throw new Error(
      `storage location ${describeLocation(location)} changed owner while being claimed`,
    );
  }
}

/** `local bucket "public", folder "widget"`: how errors name a location. */
export function describeLocation(location: StorageLocation): string {
  return `${location.provider} bucket ${JSON.stringify(location.bucket)}, folder ${JSON.stringify(location.folder)}`;
}
