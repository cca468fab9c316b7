/** Versioned objects never change under their URL: caches may keep them for a year. */
export const IMMUTABLE_CACHE_CONTROL = "public, max-age=31536000, immutable";

/** `latest/` and prerelease channels change with each release: caches keep them briefly. */
export function floatingCacheControl(maxAgeSeconds: number): string {
  return `public, max-age=${maxAgeSeconds}`;
}
