import { busyShare, cpuSample, ioPressure, waitForQuiet, type CpuSample } from './quiet-machine.js';

/**
 * A machine whose busy share per window follows `busy`, and its IO pressure `stalls`, each then
 * staying at its last value (no `stalls`: a kernel that reports none).
 */
function machine(busy: number[], stalls: number[] = []) {
  let [t, idle, i] = [0, 0, 0];
  const sample = (): CpuSample => ({ idleMs: idle, totalMs: t });
  const sleep = async (ms: number) => {
    const b = busy[Math.min(i++, busy.length - 1)]!;
    t += ms * 2;
    idle += ms * 2 * (1 - b);
  };
  const io = () => (stalls.length ? stalls[Math.min(i - 1, stalls.length - 1)]! : null);
  return { sample, sleep, io };
}

describe('waitForQuiet (a benchmark run starts on a quiet machine)', () => {
  it.each([
    ['quiet at once', [0.1, 0.1], { quiet: true, waited_s: 4 }],
    ['a build ending: waits for two quiet windows in a row', [0.9, 0.6, 0.1, 0.8, 0.2, 0.1], { quiet: true, waited_s: 12 }],
    ['exactly at the limit counts as quiet', [0.25, 0.25], { quiet: true, waited_s: 4 }],
    ['busy throughout: gives up at the timeout and says so', [0.9], { quiet: false, waited_s: 20 }],
  ])('%s', async (_name, busy, expected) => {
    const m = machine(busy);
    const r = await waitForQuiet({ windowMs: 2000, windows: 2, maxBusy: 0.25, timeoutMs: 20_000, ...m });
    expect(r).toMatchObject(expected);
  });

  it.each([
    [
      'idle cores on a stalled disk are not quiet: waits for the IO to settle',
      [0.03],
      [0.88, 0.75, 0.2, 0.1],
      { quiet: true, waited_s: 8, io_pressure: 0.1 },
    ],
    ['a disk that stays stalled: gives up at the timeout and says so', [0.03], [0.8], { quiet: false, waited_s: 20, io_pressure: 0.8 }],
    ['no IO pressure reported: the CPU decides', [0.1], [], { quiet: true, waited_s: 4, io_pressure: null }],
  ])('%s', async (_name, busy, stalls, expected) => {
    const m = machine(busy, stalls);
    const r = await waitForQuiet({ windowMs: 2000, windows: 2, maxBusy: 0.25, maxIoPressure: 0.25, timeoutMs: 20_000, ...m });
    expect(r).toMatchObject(expected);
  });

  it.each([
    ['some avg10=85.94 avg60=81.53 avg300=73.03 total=1106987957\nfull avg10=67.23 avg60=36.77 avg300=32.72 total=702306400\n', 0.8594],
    ['some avg10=0.06 avg60=9.47 avg300=49.65 total=1593119696\n', 0.0006],
    ['nothing the kernel writes', null],
  ])('ioPressure reads `some avg10` of %j', (text, share) => {
    const got = ioPressure(() => text);
    if (share === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(share, 9);
  });

  it('ioPressure is null where the kernel has no PSI', () => {
    expect(
      ioPressure(() => {
        throw new Error('ENOENT');
      }),
    ).toBeNull();
  });

  it.each([
    [{ maxBusy: 0 }, /maxBusy/],
    [{ maxIoPressure: 0 }, /maxIoPressure/],
    [{ maxBusy: 1.5 }, /maxBusy/],
    [{ windows: 0 }, /windows/],
    [{ windowMs: -1 }, /windowMs/],
  ])('rejects %j', async (opts, message) => {
    await expect(waitForQuiet(opts)).rejects.toThrow(message);
  });

  it.each([
    [{ idleMs: 0, totalMs: 0 }, { idleMs: 50, totalMs: 100 }, 0.5],
    [{ idleMs: 0, totalMs: 0 }, { idleMs: 100, totalMs: 100 }, 0],
    [{ idleMs: 10, totalMs: 10 }, { idleMs: 10, totalMs: 10 }, 0],
  ])('busyShare(%j, %j) = %d', (a, b, share) => {
    expect(busyShare(a, b)).toBeCloseTo(share, 9);
  });

  it('reads the real counters: they only grow', () => {
    const [a, b] = [cpuSample(), cpuSample()];
    expect(b.totalMs).toBeGreaterThanOrEqual(a.totalMs);
    expect(b.idleMs).toBeGreaterThanOrEqual(a.idleMs);
  });
});
