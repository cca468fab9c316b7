/**
 * A message's `/send` tags and metadata, kept with its queue rows (column `labels`, JSON or
 * NULL) so that its status (`GET /messages/{id}`) and delivery events can name them. Empty when
 * the message had none (`/send-raw`, SMTP).
 */
export interface MessageLabels {
  readonly tags: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
}

/** What `labelsOf` answers for a message: its owner and its labels. */
export interface MessageOwnership {
  /** The sending client; null for `/send` on an open instance. */
  readonly client_id: string | null;
  readonly labels: MessageLabels;
}

export const NO_LABELS: MessageLabels = Object.freeze({ tags: [], metadata: {} });

/** The column's value: NULL when there is nothing to keep. */
export function encodeLabels(labels: Partial<MessageLabels> | undefined): string | null {
  const tags = labels?.tags ?? [];
  const metadata = labels?.metadata ?? {};
  if (tags.length === 0 && Object.keys(metadata).length === 0) return null;
  return JSON.stringify({ tags, metadata });
}

export function decodeLabels(column: string | null): MessageLabels {
  return column === null ? NO_LABELS : (JSON.parse(column) as MessageLabels);
}
