export { AppError, defineError, isAppError } from "./errors.js";
export { type Level, type LogFilter, parseLogFilter, thresholdFor } from "./log-filter.js";
export { createLogging, type Logger, type Logging, type LoggingOptions } from "./logger.js";
export {
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  preparePrivateSqliteFile,
} from "./private-files.js";
export { safeEqual } from "./secrets.js";
export { waitForStopSignal, withinDeadline } from "./shutdown.js";
