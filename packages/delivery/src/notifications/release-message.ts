import type { NotificationType } from "./notification-repository.js";

/** The outcome of one release processing, as notifications need it (a history record fits). */
export interface ReleaseOutcome {
  /** `owner/name`. */
  readonly repository: string;
  /** Empty for a record about the repository itself rather than one of its releases. */
  readonly tag: string;
  readonly status: "success" | "partial" | "failed";
  readonly files_count: number;
  readonly errors: readonly string[];
  /** What started the processing: manual, scheduler, webhook or reprocess. */
  readonly trigger: string;
}

/** At most this many errors are spelled out in a message; the rest are counted. */
const ERRORS_SHOWN = 3;

const TYPES: Record<ReleaseOutcome["status"], NotificationType> = {
  success: "release_processed",
  partial: "release_partial",
  failed: "release_failed",
};

function counted(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function errorList(errors: readonly string[]): string {
  if (errors.length === 0) return "";
  const shown = errors.slice(0, ERRORS_SHOWN).map((error) => `\n- ${error}`);
  const more = errors.length > ERRORS_SHOWN ? `\n… and ${errors.length - ERRORS_SHOWN} more` : "";
  return shown.join("") + more;
}

/** The notification type and the text (plain, naming `owner/repo` and the tag) of an outcome. */
export function releaseMessage(outcome: ReleaseOutcome): { type: NotificationType; text: string } {
  const { repository, tag, trigger } = outcome;
  // A record without a tag is about the repository itself (missing on the code host).
  const head =
    tag === ""
      ? `Repository ${repository} could not be checked`
      : {
          success: `Release ${tag} of ${repository} published (${counted(outcome.files_count, "file")})`,
          partial: `Release ${tag} of ${repository} partially published (${counted(outcome.files_count, "file")}, ${counted(outcome.errors.length, "error")})`,
          failed: `Release ${tag} of ${repository} failed to publish`,
        }[outcome.status];
  return {
    type: TYPES[outcome.status],
    text: `${head}, by ${trigger}.${errorList(outcome.errors)}`,
  };
}
