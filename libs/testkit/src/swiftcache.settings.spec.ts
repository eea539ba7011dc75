import { kvMemoryGb, PAPER_SETTINGS, UTILIZATION, workerShares } from './swiftcache.settings.js';

describe('SwiftCache paper settings', () => {
  it('every model of every setting fits its GPU at the utilization used', () => {
    for (const s of PAPER_SETTINGS)
      for (const m of [s.master, ...s.workers])
        expect({ s: s.vramGb, m, fits: kvMemoryGb(s.vramGb, m) > 0 }).toEqual({ s: s.vramGb, m, fits: true });
  });

  it("at vLLM's default 0.9, Qwen3-14B would not fit 32 GB (why 0.95)", () => {
    expect(kvMemoryGb(32, 'Qwen3-14B', 0.9)).toBe(0);
    expect(UTILIZATION).toBe(0.95);
  });

  it.each<[number, number, number]>([
    // vram, worker 1 / master, worker 2 / master: (0.95·V − weights) ratios
    [96, (91.2 - 29.54) / (91.2 - 13.48), (91.2 - 16.38) / (91.2 - 13.48)],
    [24, (22.8 - 16.38) / (22.8 - 13.48), (22.8 - 16.38) / (22.8 - 13.48)],
  ])('%i GB: worker shares of the master memory', (vram, a, b) => {
    const [x, y] = workerShares(PAPER_SETTINGS.find((s) => s.vramGb === vram)!);
    expect(x).toBeCloseTo(a, 6);
    expect(y).toBeCloseTo(b, 6);
  });

  it('refuses a model it has no weights for', () => {
    expect(() => kvMemoryGb(24, 'nope')).toThrow(RangeError);
  });
});
