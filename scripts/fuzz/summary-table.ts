import type { CampaignResult } from "./campaign.js";

// The printed summary: one row per target, the child's memory, and the findings grouped.

const mib = (kib: number | null | undefined) =>
  kib === null || kib === undefined ? "n/a" : (kib / 1024).toFixed(0);

/** The most frequent statuses first, `200×812 400×95 …` (at most six). */
function histogram(statuses: Map<string, number>): string {
  const sorted = [...statuses].sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, 6).map(([status, count]) => `${status}×${count}`);
  const rest = sorted.slice(6).reduce((sum, [, count]) => sum + count, 0);
  return `${shown.join(" ")}${rest ? ` other×${rest}` : ""}`;
}

export function summaryLines(
  service: string,
  seed: string,
  seconds: number,
  result: CampaignResult,
): string[] {
  const lines = [
    `fuzz ${service}, seed ${seed}, ${seconds} s: ${result.inputs} inputs, ${result.restarts} restart(s)`,
    "",
    "| target | inputs | statuses | 5xx | crashes | stalls | lockouts | max RSS (MiB) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- |",
  ];
  for (const [name, stats] of result.stats) {
    lines.push(
      `| ${name} | ${stats.inputs} | ${histogram(stats.statuses)} | ${stats.serverErrors} | ${stats.crashes} | ${stats.stalls} | ${stats.lockouts} | ${mib(stats.maxRssKib)} |`,
    );
  }
  const rss = result.rssKib;
  lines.push(
    "",
    rss.length
      ? `child RSS over ${rss.length} readings: first ${mib(rss[0])} MiB, last ${mib(rss.at(-1))} MiB, max ${mib(Math.max(...rss))} MiB`
      : "child RSS: no reading",
  );
  const groups = [...result.findings.groups.values()];
  lines.push("", groups.length ? "findings:" : "findings: none");
  for (const group of groups) {
    lines.push(
      `- ${group.kind} ×${group.count}: ${group.signature}`,
      `  first input: ${group.first.inputs.at(-1)?.summary ?? "-"}`,
    );
    for (const file of group.files) lines.push(`  ${file}`);
  }
  return lines;
}

/** Whether the run found something that fails it (any crash, 5xx, stall or lockout). */
export function failed(result: CampaignResult): boolean {
  return result.findings.groups.size > 0;
}
