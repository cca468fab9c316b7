export { type LoadedModules, modulesLoadedAtIdle } from "./boot-modules.js";
export { modeOf, useUsualUmask } from "./file-modes.js";
export { freePort } from "./free-port.js";
export {
  bareNodeServer,
  type IdleBoot,
  type IdleComparison,
  type IdleStart,
  idleBesideBareNode,
  idleRssKib,
  inScratchFolder,
} from "./idle-memory.js";
export { type LauncherCommand, launcherCommand } from "./launcher-command.js";
export { LogCapture } from "./log-capture.js";
export { ManualClock } from "./manual-clock.js";
export {
  documentedOperations,
  type OpenApiPaths,
  registeredOperations,
} from "./openapi-coverage.js";
export { cpuMs, machineCpuMs, peakRssKib, resetPeakRss } from "./process-usage.js";
export { sampleValue } from "./prometheus-text.js";
export { type ReadyWait, ServiceProcess } from "./service-process.js";
export { type ExternalService, MARIADB, serviceAvailable } from "./services.js";
export { makeTempDir } from "./temp-dir.js";
export {
  SCHED_BATCH,
  SCHED_OTHER,
  threadPolicies,
  threadSchedulingSupported,
} from "./thread-policies.js";
