export { LogCapture } from "./log-capture.js";
export { type ExternalService, MARIADB, REDIS, serviceAvailable } from "./services.js";
export { makeTempDir } from "./temp-dir.js";
