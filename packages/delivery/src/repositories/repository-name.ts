import { InvalidRepositoryName } from "../errors.js";

/** A code-host repository name split into its owner and name. */
export interface RepositoryName {
  readonly owner: string;
  readonly name: string;
}

// GitHub's own rules: owners are 1-39 letters, digits or inner hyphens; repository names up to
// 100 of letters, digits, `.`, `_`, `-`, and never `.` or `..` (which would also be path tricks).
const OWNER = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?$/;
const NAME = /^[A-Za-z0-9._-]{1,100}$/;

/** Validates an owner and name (from a path or a body); throws `InvalidRepositoryName`. */
export function repositoryName(owner: string, name: string): RepositoryName {
  if (!OWNER.test(owner) || !NAME.test(name) || name === "." || name === "..") {
    throw InvalidRepositoryName();
  }
  return { owner, name };
}

/** Parses `owner/repo`; throws `InvalidRepositoryName`. */
export function parseRepositoryName(fullName: string): RepositoryName {
  const parts = fullName.trim().split("/");
  if (parts.length !== 2) throw InvalidRepositoryName();
  return repositoryName(parts[0] ?? "", parts[1] ?? "");
}
