/** The folder under `folder_name` that always holds the newest release. */
export const LATEST_FOLDER = "latest";

/** The checksums of a published folder, in the `sha256sum -c` format. */
export const CHECKSUMS_FILE = "SHA256SUMS";
/** The Ed25519 signature of `SHA256SUMS` (only with `RELEASE_SIGNING_KEY`). */
export const SIGNATURE_FILE = "SHA256SUMS.sig";
/** What an updater reads: the release and every file of the folder. */
export const MANIFEST_FILE = "manifest.json";

/** Names the service writes at the top of each published folder: no declared file may take one. */
export const RESERVED_NAMES: readonly string[] = [CHECKSUMS_FILE, SIGNATURE_FILE, MANIFEST_FILE];

/**
 * Whether a destination would collide with a reserved name: its first segment is one (compared
 * without regard to case, since a case-insensitive disk would make `sha256sums` the same file,
 * and a folder of that name could not coexist with the file on local storage).
 */
export function isReservedDestination(destination: string): boolean {
  const first = (destination.split("/")[0] ?? "").toLowerCase();
  return RESERVED_NAMES.some((name) => name.toLowerCase() === first);
}
