import { InvalidTag } from "../errors.js";

/** Longest tag accepted (the history's `tag` column; GitHub's own limit is lower). */
export const MAX_TAG_LENGTH = 255;

// Git's rules for a ref name (git check-ref-format), which every tag on the code host obeys.
const FORBIDDEN_CHARACTERS = /[\p{Cc} ~^:?*[\\]/u;
const LONE_SURROGATE = /\p{Cs}/u;

/** Why `tag` cannot be a release tag, or null when it can. */
export function tagProblem(tag: string): string | null {
  if (tag.length === 0) return "empty";
  if (tag.length > MAX_TAG_LENGTH) return `longer than ${MAX_TAG_LENGTH} characters`;
  // NOTE: a lone UTF-16 surrogate (`"\ud800"` in JSON) cannot be encoded into a URL at all.
  if (LONE_SURROGATE.test(tag)) return "not well-formed Unicode (a lone surrogate)";
  if (FORBIDDEN_CHARACTERS.test(tag)) {
    return "contains a space, a control character or one of ~ ^ : ? * [ \\";
  }
  if (tag.includes("..") || tag.includes("@{") || tag === "@")
    return 'contains "..", "@{" or is "@"';
  if (tag.startsWith("/") || tag.endsWith("/") || tag.includes("//")) {
    return 'has an empty "/"-separated part';
  }
  if (tag.split("/").some((part) => part.startsWith(".") || part.endsWith(".lock"))) {
    return 'has a part starting with "." or ending with ".lock"';
  }
  if (tag.endsWith(".")) return 'ends with "."';
  return null;
}

/** Throws `InvalidTag` (400) naming the problem; the tag itself is not echoed (it may be huge). */
export function assertValidTag(tag: string): void {
  const problem = tagProblem(tag);
  if (problem) throw InvalidTag(`Invalid release tag: ${problem}`);
}
