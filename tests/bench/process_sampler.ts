/**
 * A process's resident memory and open file descriptors, read from /proc
 * (Linux), and the soak's verdict on whether they grew.
 */
import { percentile } from "./percentile.ts";

export interface ProcessSample {
  /** Seconds since the load started. */
  atSeconds: number;
  /** VmRSS: what the verdict judges. */
  rssMiB: number;
  /** Its parts: anonymous memory (heaps: where a leak grows) and file pages (e.g. the database's mapped pages). */
  anonMiB: number;
  fileMiB: number;
  fds: number;
}

/** CPU seconds a process has used (Linux: utime + stime from /proc, at the kernel's 100 ticks a second). */
export async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await Deno.readTextFile(`/proc/${pid}/stat`)).split(") ")[1].split(" ");
  // utime and stime: fields 14 and 15 of stat, 12 and 13 after the command name.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function sampleProcess(pid: number, atSeconds: number): Promise<ProcessSample> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const mib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, "m").exec(status)?.[1] ?? NaN) / 1024;
  let fds = 0;
  for await (const _ of Deno.readDir(`/proc/${pid}/fd`)) fds++;
  return { atSeconds, rssMiB: mib("VmRSS"), anonMiB: mib("RssAnon"), fileMiB: mib("RssFile"), fds };
}

export interface GrowthLimits {
  /** Samples before this are warm-up (JIT, caches, pools filling) and not judged. */
  warmupSeconds: number;
  /** How much the last third's median RSS may exceed the first third's, as a fraction. */
  rssTolerance: number;
  /** How many more descriptors the last third's median may hold (connections in flight come and go). */
  fdTolerance: number;
}

export interface Third {
  fromSeconds: number;
  toSeconds: number;
  rssMedianMiB: number;
  rssMaxMiB: number;
  anonMedianMiB: number;
  fileMedianMiB: number;
  fdsMedian: number;
  fdsMax: number;
}

/**
 * The samples after warm-up cut in thirds; growth when the last third's
 * medians exceed the first third's by more than the limits. Medians, because
 * a garbage-collected heap saw-tooths and a single sample proves nothing;
 * thirds, because a leak shows as a level that keeps rising, not as a peak.
 */
export function judgeGrowth(samples: ProcessSample[], limits: GrowthLimits) {
  const judged = samples.filter((sample) => sample.atSeconds >= limits.warmupSeconds);
  if (judged.length < 6) return { thirds: [], grew: true, reasons: [`only ${judged.length} samples after warm-up`] };
  const size = Math.floor(judged.length / 3);
  const thirds: Third[] = [judged.slice(0, size), judged.slice(size, 2 * size), judged.slice(2 * size)].map((part) => ({
    fromSeconds: part[0].atSeconds,
    toSeconds: part.at(-1)!.atSeconds,
    rssMedianMiB: percentile(part.map((s) => s.rssMiB), 0.5),
    rssMaxMiB: Math.max(...part.map((s) => s.rssMiB)),
    anonMedianMiB: percentile(part.map((s) => s.anonMiB), 0.5),
    fileMedianMiB: percentile(part.map((s) => s.fileMiB), 0.5),
    fdsMedian: percentile(part.map((s) => s.fds), 0.5),
    fdsMax: Math.max(...part.map((s) => s.fds)),
  }));
  const [first, , last] = thirds;
  const rssGrowth = last.rssMedianMiB / first.rssMedianMiB - 1;
  const fdGrowth = last.fdsMedian - first.fdsMedian;
  const reasons: string[] = [];
  if (rssGrowth > limits.rssTolerance) {
    reasons.push(`RSS median grew ${(rssGrowth * 100).toFixed(1)} % (limit ${limits.rssTolerance * 100} %)`);
  }
  if (fdGrowth > limits.fdTolerance) reasons.push(`open descriptors grew by ${fdGrowth} (limit ${limits.fdTolerance})`);
  return { thirds, rssGrowth, fdGrowth, grew: reasons.length > 0, reasons };
}
