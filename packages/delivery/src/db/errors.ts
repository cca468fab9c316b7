// Driver errors translated in one place: repositories ask "is this a unique violation?" and
// throw their own domain error, whatever the driver.

interface DriverError {
  code?: unknown;
  errno?: unknown;
}

/** better-sqlite3: SQLITE_CONSTRAINT_UNIQUE / _PRIMARYKEY; mysql2: ER_DUP_ENTRY (1062). */
export function isUniqueViolation(error: unknown): boolean {
  if (!error || typeof error !== "object") return false;
  const { code, errno } = error as DriverError;
  return (
    code === "SQLITE_CONSTRAINT_UNIQUE" ||
    code === "SQLITE_CONSTRAINT_PRIMARYKEY" ||
    code === "ER_DUP_ENTRY" ||
    errno === 1062
  );
}

/** Runs `work`; a unique violation becomes the error `onDuplicate` makes, others pass through. */
export async function translateUniqueViolation<T>(
  work: Promise<T>,
  onDuplicate: () => Error,
): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (isUniqueViolation(error)) throw onDuplicate();
    throw error;
  }
}
