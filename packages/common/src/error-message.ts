/** The message of anything thrown, for a log field or a report line. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
