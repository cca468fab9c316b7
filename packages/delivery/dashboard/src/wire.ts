// The service's answers as the dashboard reads them (see the service's OpenAPI document).

export interface User {
  readonly id: number;
  readonly email: string;
  readonly name: string;
}

export interface Repository {
  readonly id: number;
  readonly owner: string;
  readonly name: string;
  readonly full_name: string;
  readonly active: boolean;
  readonly last_check: string | null;
}

export interface HistoryRecord {
  readonly repository: string;
  readonly tag: string;
  readonly status: "success" | "partial" | "failed";
  readonly files_count: number;
  readonly total_bytes: number;
  readonly errors: readonly string[];
  readonly trigger: string;
  readonly processed_at: string;
  /** Null for records older than durations. */
  readonly duration_ms: number | null;
}

export interface ReleaseResult {
  readonly repository: string;
  readonly tag: string;
  readonly processed: ReadonlyArray<{ readonly file: string; readonly size: number }>;
  readonly skipped: readonly string[];
  readonly errors: readonly string[];
}

export interface DryRun {
  readonly total_releases: number;
  readonly releases: ReadonlyArray<{
    readonly tag: string;
    readonly name: string;
    readonly created_at: string;
    readonly prerelease: boolean;
    readonly draft: boolean;
    readonly assets: ReadonlyArray<{ readonly name: string; readonly size: number }>;
  }>;
}

export interface Status {
  readonly version: string;
  readonly repositories: { readonly active: number; readonly total: number };
  readonly releases_last_24h: number;
  readonly codehost_rate_limit: {
    readonly limit: number | null;
    readonly remaining: number | null;
    readonly used: number | null;
    readonly reset: number | null;
  };
  readonly services: {
    readonly mysql: boolean;
    readonly database: string;
    readonly objectstore: boolean;
  };
  readonly scheduler: {
    readonly running: boolean;
    readonly interval_minutes: number;
    readonly next_round_at: string | null;
  };
}

export interface Notification {
  readonly id: number;
  readonly type: string;
  readonly repository: string;
  readonly tag: string;
  readonly message: string;
  readonly delivered: boolean;
  readonly created_at: string;
}

/** A release result in one line: what was published, skipped or failed. */
export function summarize(result: ReleaseResult): string {
  const parts = [`${result.repository} ${result.tag}:`];
  if (result.processed.length > 0) parts.push(`${result.processed.length} file(s) published`);
  if (result.skipped.length > 0) parts.push(`skipped (${result.skipped.join("; ")})`);
  if (result.errors.length > 0) parts.push(`errors: ${result.errors.join("; ")}`);
  if (parts.length === 1) parts.push("nothing to publish");
  return parts.join(" ");
}
