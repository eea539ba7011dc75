import { readFileSync } from 'node:fs';
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

/**
 * The share of the last 10 s in which some task stalled on IO (Linux PSI, `/proc/pressure/io`,
 * `some avg10`), 0–1; null where the kernel does not report it. CPU counters cannot see a machine
 * whose disk holds its processes up: they wait in IO with the cores idle.
 */
export function ioPressure(read: () => string = () => readFileSync('/proc/pressure/io', 'utf8')): number | null {
  try {
    const m = /^some\b.*\bavg10=([0-9.]+)/m.exec(read());
    const x = m ? Number(m[1]) / 100 : NaN;
    return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : null;
  } catch {
    return null;
  }
}

export interface QuietOptions {
  /** The busiest the machine may be over a window and count as quiet (share of all cores). */
  readonly maxBusy?: number;
  /** The most IO pressure (ioPressure) a quiet window may have; ignored where the kernel reports none. */
  readonly maxIoPressure?: number;
  /** Each window the busy share is measured over, ms. */
  readonly windowMs?: number;
  /** Consecutive quiet windows needed. */
  readonly windows?: number;
  /** Longest wait before going on anyway (the result then says it was not quiet), ms. */
  readonly timeoutMs?: number;
  readonly sample?: () => CpuSample;
  readonly io?: () => number | null;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface QuietResult {
  /** Whether `windows` quiet windows in a row were seen before the timeout. */
  readonly quiet: boolean;
  /** Time spent waiting, s. */
  readonly waited_s: number;
  /** The busy share of the last window measured. */
  readonly busy: number;
  /** The IO pressure at the end of that window (null: not reported by this kernel). */
  readonly io_pressure: number | null;
}

/**
 * Waits until the machine is quiet: `windows` consecutive windows each at most `maxBusy` busy and,
 * where the kernel reports it, at most `maxIoPressure` stalled on IO.
 * A benchmark that compares runs measured one after another must start each on the same machine;
 * the 1-minute load average cannot tell, as it still carries a build that ended a minute earlier
 * (a live multiround's first run once started at load 3 and queued for seconds while its
 * neighbours did not), and the CPU alone cannot either: a machine whose disk stalled the reference
 * engine's nodes (IO pressure 75–88 %, 97 % IO wait) read 3 % busy. Never waits past `timeoutMs`:
 * a machine that stays busy is reported, not hidden.
 */
export async function waitForQuiet(opts: QuietOptions = {}): Promise<QuietResult> {
  const {
    maxBusy = 0.25,
    maxIoPressure = 0.25,
    windowMs = 2000,
    windows = 2,
    timeoutMs = 180_000,
    sample = cpuSample,
    io = ioPressure,
  } = opts;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  if (!(maxBusy > 0 && maxBusy <= 1)) throw new RangeError(`maxBusy must be in (0, 1], got ${maxBusy}`);
  if (!(maxIoPressure > 0 && maxIoPressure <= 1)) throw new RangeError(`maxIoPressure must be in (0, 1], got ${maxIoPressure}`);
  if (!(windowMs > 0) || !Number.isInteger(windows) || windows < 1 || !(timeoutMs >= 0))
    throw new RangeError('windowMs must be > 0, windows a positive integer and timeoutMs ≥ 0');
  let [waited, quietRun, busy] = [0, 0, 1];
  let stalled: number | null = null;
  for (;;) {
    const a = sample();
    await sleep(windowMs);
    waited += windowMs;
    busy = busyShare(a, sample());
    stalled = io();
    quietRun = busy <= maxBusy && (stalled === null || stalled <= maxIoPressure) ? quietRun + 1 : 0;
    const result = { waited_s: waited / 1000, busy: round3(busy), io_pressure: stalled === null ? null : round3(stalled) };
    if (quietRun >= windows) return { quiet: true, ...result };
    if (waited >= timeoutMs) return { quiet: false, ...result };
  }
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
