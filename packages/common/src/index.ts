export { type AccessLogReply, type AccessLogRequest, accessLogHook } from "./access-log.js";
export { type Clock, epochSeconds, systemClock } from "./clock.js";
export {
  type CommandLine,
  type CommandSpec,
  type EnvironmentVariable,
  type ProgramSpec,
  parseCommandLine,
  USAGE_EXIT_CODE,
  usageText,
} from "./command-line.js";
export { type BootCulprit, bootStep, ConfigError } from "./config-error.js";
export { deepFreeze } from "./deep-freeze.js";
export { syncFd, syncToDisk } from "./disk-sync.js";
export { messageOf } from "./error-message.js";
export { AppError, defineError, isAppError } from "./errors.js";
export { type ClosableHttpApp, closeHttpGracefully } from "./graceful-close.js";
export { groupBy } from "./group-by.js";
export { batchHelperThreads, helperThreadStarted } from "./helper-threads.js";
export { type HttpObservability, observeHttp } from "./http-observability.js";
export { type Level, type LogFilter, parseLogFilter, thresholdFor } from "./log-filter.js";
export {
  createLogging,
  type Logger,
  type Logging,
  type LoggingOptions,
  withRequest,
} from "./logger.js";
export { createServiceMetrics, type ServiceMetrics, UNMATCHED_ROUTE } from "./metrics.js";
export { DOCS_PATH, docsUiOptions, type OpenApiDescription, openApiOptions } from "./openapi.js";
export {
  PRIVATE_DIR_MODE,
  PRIVATE_FILE_MODE,
  preparePrivateSqliteFile,
} from "./private-files.js";
export {
  createReadiness,
  PROBE_TIMEOUT_MS,
  type Readiness,
  type ReadinessProbe,
  type ReadinessReport,
  ReadinessReportSchema,
} from "./readiness.js";
export { currentRequestId } from "./request-context.js";
export { REQUEST_ID_HEADER, requestIdFor, requestIdOptions } from "./request-id.js";
export { type RetryOptions, retryWithDelays } from "./retry.js";
export { safeEqual } from "./secrets.js";
export { neverSettles, waitForStopSignal, withinDeadline } from "./shutdown.js";
export { readPackageVersion } from "./version.js";
export { compiledModuleUrl } from "./worker-url.js";
