import type { FuzzInput, Instance, Outcome, Subject, Target } from "./campaign-types.js";
import { type FindingInput, type FindingKind, FindingLog } from "./findings.js";
import { Prng } from "./prng.js";
import { healthMs } from "./service-process.js";

// The fuzzing loop: inputs from every target in turn (each target gets an equal share of the
// time), the child watched after every input (exit = crash), /health timed and the memory read
// every PROBE_EVERY inputs, and a fresh instance after a crash or a lockout.

/** Inputs between two /health probes and memory readings. */
export const PROBE_EVERY = 200;
/** A /health answer slower than this is a stall. */
export const STALL_MS = 2_000;
/** Inputs kept for a crash report (the crash may come from an earlier input than the last). */
const RECENT_INPUTS = 10;
/** After an input the connection of which was refused or dropped, how long a dying child may take to exit. */
const EXIT_WAIT_MS = 1_000;
/** Outcomes that may mean the child is going down. */
const DROPPED = new Set(["refused", "closed", "reset", "no-answer"]);

export interface TargetStats {
  inputs: number;
  /** Time spent on this target's inputs (milliseconds). */
  busyMs: number;
  statuses: Map<string, number>;
  serverErrors: number;
  crashes: number;
  stalls: number;
  lockouts: number;
  /** Highest child RSS (KiB) read at a probe that followed this target's inputs. */
  maxRssKib: number | null;
}

export interface CampaignResult {
  stats: Map<string, TargetStats>;
  findings: FindingLog;
  /** Every RSS reading (KiB), in order. */
  rssKib: number[];
  inputs: number;
  restarts: number;
}

export interface CampaignOptions {
  seed: string;
  seconds: number;
  findingsDir: string;
  log(line: string): void;
  /** Ends the run early (Ctrl-C), with the summary of what ran. */
  stop?: AbortSignal;
}

export async function runCampaign(
  subject: Subject,
  options: CampaignOptions,
): Promise<CampaignResult> {
  const findings = new FindingLog(options.findingsDir, {
    service: subject.name,
    seed: options.seed,
  });
  const stats = new Map<string, TargetStats>();
  const statsOf = (name: string): TargetStats => {
    let entry = stats.get(name);
    if (!entry) {
      entry = {
        inputs: 0,
        busyMs: 0,
        statuses: new Map(),
        serverErrors: 0,
        crashes: 0,
        stalls: 0,
        lockouts: 0,
        maxRssKib: null,
      };
      stats.set(name, entry);
    }
    return entry;
  };
  const rssKib: number[] = [];
  const recent: Array<FindingInput & { input: FuzzInput }> = [];
  let sinceProbe = new Set<string>();
  let inputs = 0;
  let restarts = 0;
  let instance: Instance = await subject.startInstance();
  for (const target of instance.targets) statsOf(target.name);
  const deadline = Date.now() + options.seconds * 1000;

  const report = async (
    kind: FindingKind,
    target: string,
    signature: string,
    observed: string,
    from: FindingInput[],
  ) => {
    options.log(`finding: ${kind} ${signature}`);
    await findings.record({
      kind,
      target,
      signature,
      observed,
      inputs: from.map(({ target: t, index, summary, reproduction }) => ({
        target: t,
        index,
        summary,
        reproduction,
      })),
    });
  };

  const replace = async () => {
    await instance.close();
    instance = await subject.startInstance();
    restarts += 1;
    recent.length = 0;
  };

  const probe = async (lastTarget: string) => {
    const ms = await healthMs(instance.service);
    const rss = await instance.service.rssKib();
    if (rss !== null) {
      rssKib.push(rss);
      for (const name of sinceProbe) {
        const entry = statsOf(name);
        entry.maxRssKib = Math.max(entry.maxRssKib ?? 0, rss);
      }
    }
    sinceProbe = new Set();
    if (instance.service.exit) return; // reported as the crash it is, after the next input
    if (ms === null || ms > STALL_MS) {
      statsOf(lastTarget).stalls += 1;
      await report(
        "stall",
        lastTarget,
        `${lastTarget}: /health ${ms === null ? "unanswered" : `slower than ${STALL_MS} ms`} after these inputs`,
        `health probe: ${ms === null ? "no 200 within 5 s" : `${Math.round(ms)} ms`}`,
        recent,
      );
    }
  };

  try {
    while (Date.now() < deadline && !options.stop?.aborted) {
      // Equal time per target: the one that has had the least time goes next.
      const target = [...instance.targets].sort(
        (a, b) => statsOf(a.name).busyMs - statsOf(b.name).busyMs,
      )[0] as Target;
      const entry = statsOf(target.name);
      const index = entry.inputs;
      const input = target.generate(Prng.derive(options.seed, target.name, index));
      recent.push({
        target: target.name,
        index,
        summary: input.summary,
        reproduction: input.reproduction,
        input,
      });
      if (recent.length > RECENT_INPUTS) recent.shift();
      const started = performance.now();
      const outcome: Outcome = await input.run();
      entry.busyMs += performance.now() - started;
      entry.inputs += 1;
      inputs += 1;
      sinceProbe.add(target.name);
      entry.statuses.set(outcome.status, (entry.statuses.get(outcome.status) ?? 0) + 1);
      const last = recent.slice(-1);

      if (
        instance.service.exit ||
        (DROPPED.has(outcome.status) && (await instance.service.exitsWithin(EXIT_WAIT_MS)))
      ) {
        entry.crashes += 1;
        const tail = instance.service.outputTail();
        await report(
          "crash",
          target.name,
          `${target.name}: ${crashSignature(tail)}`,
          `exit ${JSON.stringify(instance.service.exit)}\n${tail.slice(-6000)}`,
          recent,
        );
        await replace();
        continue;
      }
      if (outcome.serverError) {
        entry.serverErrors += 1;
        await report(
          "5xx",
          target.name,
          `${target.name}: ${outcome.status} ${errorCode(outcome.detail)}`,
          outcome.detail,
          last,
        );
      }
      if (outcome.hung) {
        entry.stalls += 1;
        await report(
          "stall",
          target.name,
          `${target.name}: no answer within the bound`,
          `${Math.round(outcome.ms)} ms: ${outcome.detail}`,
          last,
        );
      }
      if (outcome.lockedOut) {
        entry.lockouts += 1;
        await report(
          "lockout",
          target.name,
          `${target.name}: the fuzzer was locked out after ${outcome.status}`,
          outcome.detail,
          last,
        );
        await replace();
        continue;
      }
      if (inputs % PROBE_EVERY === 0) await probe(target.name);
    }
    const lastTarget = recent.at(-1)?.target;
    if (lastTarget !== undefined) await probe(lastTarget);
  } finally {
    // Whatever ends the run (its time, Ctrl-C, a fuzzer bug), the child is stopped by its PID.
    await instance.close();
  }
  return { stats, findings, rssKib, inputs, restarts };
}

/**
 * What a crashed child printed, for grouping: the error's name, the emitter of an unhandled
 * 'error' event and the error's cause (`TypeError: terminated on ByteCounter, cause
 * ResponseContentLengthMismatchError`).
 */
export function crashSignature(tail: string): string {
  const text = tail.replace(/^\{"level".*$/gm, "");
  const error = /\b([A-Z][A-Za-z]*(?:Error|Exception))\b(?::[^\n]{0,80})?/.exec(text)?.[0].trim();
  if (error === undefined) return "exited without an error message";
  const emitter = /Emitted 'error' event on (\w+) instance/.exec(text)?.[1];
  const cause = /\[cause\]: (\w+)/.exec(text)?.[1];
  return `${error}${emitter ? ` on ${emitter}` : ""}${cause ? `, cause ${cause}` : ""}`;
}

/** The `error` field of a JSON answer, for grouping alike failures. */
export function errorCode(answer: string): string {
  const body = answer.slice(answer.indexOf("\r\n\r\n") + 4);
  const code = /"error"\s*:\s*"([^"]{0,80})"/.exec(body);
  return code ? (code[1] ?? "") : body.slice(0, 60).replace(/\s+/g, " ");
}
