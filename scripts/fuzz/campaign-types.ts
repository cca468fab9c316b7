import type { Prng } from "./prng.js";
import type { FuzzedService } from "./service-process.js";

/** What an input did to the service. */
export interface Outcome {
  /** Histogram key: an HTTP status, an SMTP reply (`250 2.0.0`), or `no-answer`, `closed`… */
  status: string;
  /** The service failed on its side: an HTTP 5xx it does not document, SMTP `451 4.3.0`. */
  serverError: boolean;
  /** The service owed an answer and gave none within the bound. */
  hung: boolean;
  /** The input left the fuzzer itself refused (allowlist, throttle): the instance is replaced. */
  lockedOut?: boolean;
  ms: number;
  /** The first bytes of the answer or transcript. */
  detail: string;
}

/**
 * The exact bytes (and how they were sent) that reproduce an input. Buffers are saved as base64
 * with a readable copy beside them.
 */
export interface Reproduction {
  kind: "http" | "smtp" | "publish";
  [field: string]: unknown;
}

export interface FuzzInput {
  /** One line for reports. */
  summary: string;
  reproduction: Reproduction;
  run(): Promise<Outcome>;
}

/** One kind of input (JSON bodies of /send, SMTP sessions…). */
export interface Target {
  readonly name: string;
  /** Builds one input from its own generator: the same generator gives the same bytes. */
  generate(random: Prng): FuzzInput;
}

/** A running service and the targets aimed at it. */
export interface Instance {
  readonly service: FuzzedService;
  readonly targets: readonly Target[];
  /** Stops the service (by PID) and removes its temporary state. */
  close(): Promise<void>;
}

/** A service the fuzzer can start fresh instances of (after a crash or a lockout). */
export interface Subject {
  readonly name: "relay" | "delivery";
  startInstance(): Promise<Instance>;
  /** Closes what outlives instances (SMTP sink, code-host stub). */
  close(): Promise<void>;
}
