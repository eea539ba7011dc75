import { routingCheck, type PassTtft } from './routing.check.js';

const t = (p50: number, mean: number, p99: number): PassTtft => ({ ttft_p50_ms: p50, ttft_mean_ms: mean, ttft_p99_ms: p99 });

describe(routingCheck.name, () => {
  it('ratios per pass, other ÷ symphony, and the A-A spread of the first two symphony passes', () => {
    const c = routingCheck(
      [
        { symphony: t(20, 100, 1000), llmd: t(22, 110, 1100) },
        { symphony: t(22, 100, 1200), llmd: t(22, 120, 1200) },
      ],
      ['llmd'],
    );
    expect(c.per_pass).toEqual({
      symphony_vs_llmd_ttft_p50: [1.1, 1],
      symphony_vs_llmd_ttft_mean: [1.1, 1.2],
      symphony_vs_llmd_ttft_p99: [1.1, 1],
    });
    expect(c.noise).toEqual({ aa_spread_ttft_p50: 0.095, aa_spread_ttft_mean: 0, aa_spread_ttft_p99: 0.182 });
    expect(c.verdict).toEqual({ never_behind: true, failing: [] });
  });

  it('compares only the statistics asked for', () => {
    const c = routingCheck(
      [
        { symphony: t(20, 100, 1000), conductor: t(10, 101, 1000) },
        { symphony: t(20, 100, 1000), conductor: t(10, 100, 1010) },
      ],
      ['conductor'],
      ['mean', 'p99'],
    );
    expect(Object.keys(c.per_pass)).toEqual(['symphony_vs_conductor_ttft_mean', 'symphony_vs_conductor_ttft_p99']);
    expect(Object.keys(c.noise)).toEqual(['aa_spread_ttft_mean', 'aa_spread_ttft_p99']);
    // p50 is behind by half, but it was not asked for.
    expect(c.verdict).toEqual({ never_behind: true, failing: [] });
  });

  it.each<[string, Array<Record<string, PassTtft>>, RegExp]>([
    [
      'a median below 1',
      [
        { symphony: t(20, 100, 1000), llmd: t(19, 100, 1000) },
        { symphony: t(20, 100, 1000), llmd: t(19, 100, 1000) },
      ],
      /symphony_vs_llmd_ttft_p50: median 0.95 < 1/,
    ],
    [
      'one pass behind by more than the spread (0: identical A-A passes)',
      [
        { symphony: t(20, 100, 1000), llmd: t(30, 100, 1000) },
        { symphony: t(20, 100, 1000), llmd: t(30, 100, 1000) },
        { symphony: t(20, 100, 1000), llmd: t(30, 98, 1000) },
      ],
      /symphony_vs_llmd_ttft_mean: a pass at 0.98 < 1/,
    ],
    ['no pass ran the other system', [{ symphony: t(20, 100, 1000) }], /symphony_vs_llmd_ttft_p50: no pass ran both/],
  ])('fails on %s', (_name, passes, why) => {
    const c = routingCheck(passes, ['llmd']);
    expect(c.verdict.never_behind).toBe(false);
    expect(c.verdict.failing.join('\n')).toMatch(why);
  });
});
