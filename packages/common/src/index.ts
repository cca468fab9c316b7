export { AppError, defineError, isAppError } from "./errors.js";
export { type Level, type LogFilter, parseLogFilter, thresholdFor } from "./log-filter.js";
export { createLogging, type Logger, type Logging, type LoggingOptions } from "./logger.js";
export { safeEqual } from "./secrets.js";
export { waitForStopSignal, withinDeadline } from "./shutdown.js";
