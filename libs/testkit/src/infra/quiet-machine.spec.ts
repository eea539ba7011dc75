import { busyShare, cpuSample, waitForQuiet, type CpuSample } from './quiet-machine.js';

/** A machine whose busy share per window follows `busy`, then stays at the last value. */
function machine(busy: number[]) {
  let [t, idle, i] = [0, 0, 0];
  const sample = (): CpuSample => ({ idleMs: idle, totalMs: t });
  const sleep = async (ms: number) => {
    const b = busy[Math.min(i++, busy.length - 1)]!;
    t += ms * 2;
    idle += ms * 2 * (1 - b);
  };
  return { sample, sleep };
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
    [{ maxBusy: 0 }, /maxBusy/],
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
