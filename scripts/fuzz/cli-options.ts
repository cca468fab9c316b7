/** `npm run fuzz -- --service relay|delivery --seconds N --seed S [--replay target:index]` */
export interface FuzzOptions {
  service: "relay" | "delivery";
  seconds: number;
  seed: string;
  /** Run one input again instead of a campaign. */
  replay: { target: string; index: number } | undefined;
}

export const USAGE =
  "usage: npm run fuzz -- --service relay|delivery [--seconds N (60)] [--seed S (1)] [--replay <target>:<index>]";

/** Reads the options; throws with a message naming the bad one. */
export function parseOptions(argv: readonly string[]): FuzzOptions {
  const values = new Map<string, string>();
  for (let i = 0; i < argv.length; i += 2) {
    const name = argv[i] ?? "";
    const value = argv[i + 1];
    if (!["--service", "--seconds", "--seed", "--replay"].includes(name))
      throw new Error(`unknown option ${name}`);
    if (value === undefined) throw new Error(`${name} needs a value`);
    values.set(name, value);
  }
  const service = values.get("--service");
  if (service !== "relay" && service !== "delivery")
    throw new Error("--service must be relay or delivery");
  const seconds = Number(values.get("--seconds") ?? "60");
  // Every loop is bounded: a campaign runs at most a day.
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 86_400)
    throw new Error("--seconds must be a whole number from 1 to 86400");
  const replay = values.get("--replay");
  const match = replay === undefined ? undefined : /^([a-z-]+):(\d+)$/.exec(replay);
  if (replay !== undefined && !match) throw new Error("--replay must be <target>:<index>");
  return {
    service,
    seconds,
    seed: values.get("--seed") ?? "1",
    replay: match ? { target: match[1] as string, index: Number(match[2]) } : undefined,
  };
}
