import type { ProgramSpec } from "@rd/common";
import { RELAY_ENVIRONMENT } from "../config/env.js";
import { VERSION } from "../version.js";

export type RelayCommand = "serve" | "check" | "healthcheck" | "tick";

/** What `relay` accepts and what its help says (decisions.md, "Process and CLI"). */
export const RELAY_PROGRAM: ProgramSpec<RelayCommand> = {
  name: "relay",
  version: VERSION,
  about: "outbound mail relay (HTTP and SMTP submission, DKIM signing, direct MX delivery)",
  commands: {
    serve: {
      summary: "start the HTTP server, and SMTP when smtp_listen is set",
      details: `Runs until SIGTERM or SIGINT, then lets requests and SMTP transactions in hand finish
(at most 10 s), closes the ledger and the state database, and exits 0. A missing
configuration file is created with defaults; an unusable file, variable, state directory or
listen address stops the boot with a message naming it, exit 2.`,
    },
    check: {
      summary: "check the DNS records of every domain (or one) without a server",
      args: "[domain]",
      maxArgs: 1,
      details: `Prints the report of GET /check as JSON and promotes passing pending domains (the
configuration file is rewritten: run it while no server runs). Exit 0 when every check
passes, 1 when one fails, 2 for an unknown domain or an unusable configuration.`,
      env: ["RELAY_CONFIG", "RELAY_DNS"],
    },
    healthcheck: {
      summary: "GET /health on the loopback address of listen; exit 0 on 200",
      details: "Prints nothing when healthy; exit 1 with the reason on stderr otherwise.",
      env: ["RELAY_CONFIG"],
    },
    tick: {
      summary: "drain the due queue once through the running server (POST /queue/tick)",
      details: "Prints the server's JSON answer; exit 0 on 200, 1 otherwise.",
      env: ["RELAY_CONFIG", "RELAY_AUTH_TOKEN"],
    },
  },
  defaultCommand: "serve",
  environment: RELAY_ENVIRONMENT,
  exitCodes: "0 success, 1 failure, 2 usage, configuration or start-up error",
};
