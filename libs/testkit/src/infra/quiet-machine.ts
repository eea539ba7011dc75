import { cpus } from 'node:os';

/** Cumulative CPU time of the whole machine, ms: idle and in all. */
export interface CpuSample {
  readonly idleMs: number;
  readonly totalMs: number;
}

/** The machine's CPU counters now (every core summed). */
export function cpuSample(): CpuSample {
  let [idleMs, totalMs] = [0, 0];
  for (const c of cpus()) {
    idleMs += c.times.idle;
    totalMs += c.times.idle + c.times.user + c.times.nice + c.times.sys + c.times.irq;
  }
  return { idleMs, totalMs };
}

/** Share of the machine's CPU time that was busy between two samples (0 when no time passed). */
export function busyShare(a: CpuSample, b: CpuSample): number {
  const total = b.totalMs - a.totalMs;
  if (!(total > 0)) return 0;
  return Math.min(1, Math.max(0, 1 - (b.idleMs - a.idleMs) / total));
}

export interface QuietOptions {
  /** The busiest the machine may be over a window and count as quiet (share of all cores). */
  readonly maxBusy?: number;
  /** Each window the busy share is measured over, ms. */
  readonly windowMs?: number;
  /** Consecutive quiet windows needed. */
  readonly windows?: number;
  /** Longest wait before going on anyway (the result then says it was not quiet), ms. */
  readonly timeoutMs?: number;
  readonly sample?: () => CpuSample;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface QuietResult {
  /** Whether `windows` quiet windows in a row were seen before the timeout. */
  readonly quiet: boolean;
  /** Time spent waiting, s. */
  readonly waited_s: number;
  /** The busy share of the last window measured. */
  readonly busy: number;
}

/**
 * Waits until the machine is quiet: `windows` consecutive windows each at most `maxBusy` busy.
 * A benchmark that compares runs measured one after another must start each on the same machine;
 * the 1-minute load average cannot tell, as it still carries a build that ended a minute earlier
 * (a live multiround's first run once started at load 3 and queued for seconds while its
 * neighbours did not). Never waits past `timeoutMs`: a machine that stays busy is reported, not hidden.
 */
export async function waitForQuiet(opts: QuietOptions = {}): Promise<QuietResult> {
  const { maxBusy = 0.25, windowMs = 2000, windows = 2, timeoutMs = 180_000, sample = cpuSample } = opts;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  if (!(maxBusy > 0 && maxBusy <= 1)) throw new RangeError(`maxBusy must be in (0, 1], got ${maxBusy}`);
  if (!(windowMs > 0) || !Number.isInteger(windows) || windows < 1 || !(timeoutMs >= 0))
    throw new RangeError('windowMs must be > 0, windows a positive integer and timeoutMs ≥ 0');
  let [waited, quietRun, busy] = [0, 0, 1];
  for (;;) {
    const a = sample();
    await sleep(windowMs);
    waited += windowMs;
    busy = busyShare(a, sample());
    quietRun = busy <= maxBusy ? quietRun + 1 : 0;
    if (quietRun >= windows) return { quiet: true, waited_s: waited / 1000, busy: round3(busy) };
    if (waited >= timeoutMs) return { quiet: false, waited_s: waited / 1000, busy: round3(busy) };
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
