/**
 * A domain error with a stable `code` and the HTTP `status` it maps to.
 * Services throw these; each service's error handler turns them into its wire shape.
 */
export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = "AppError";
  }
}

/** Declares one kind of error: `const NotFound = defineError("not_found", 404, "not found")`. */
export function defineError(code: string, status: number, defaultMessage: string) {
  const make = (message: string = defaultMessage, details?: Record<string, unknown>) =>
    new AppError(code, status, message, details);
  return Object.assign(make, { code, status });
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
