import { sloCrossingUsers, symphonyCauses, type SymphonyResultsFigures } from './symphony.checks.js';
import { SYMPHONY_RUN } from './symphony.setup.js';

describe('sloCrossingUsers: where a TPOT curve crosses the SLO between swept counts', () => {
  const curve = (...tpots: Array<number | null>) => [64, 128, 256, 512].map((u, i) => [u, tpots[i] ?? null] as const);
  it.each([
    ['halfway between 256 and 512', curve(10, 12, 14, 16), 15, 384],
    ['exactly at a swept count', curve(10, 12, 15, 18), 15, 256],
    ['a quarter of the way from 64', curve(14, 18, 20, 22), 15, 80],
    ['met throughout: the top count (a lower bound)', curve(10, 11, 12, 13), 15, 512],
    ['missed at the first count', curve(16, 18, 20, 22), 15, null],
    ['the next figure absent: the last count met', curve(10, 12, null, 20), 15, 128],
  ])('%s', (_, c, slo, users) => {
    const got = sloCrossingUsers(c, slo);
    if (users === null) expect(got).toBeNull();
    else expect(got).toBeCloseTo(users, 6);
  });
});

describe("symphonyCauses: users_vs_vllm_at_slo names the curves' crossings, not the sweep's doubling", () => {
  const run = (tpot: number) => ({ tpot_mean_ms: tpot });
  const figures: SymphonyResultsFigures = {
    symphony: { vllm_baseline: 'vllm-paper', tpot_slo_ms: 21, users_within_slo: { symphony: 256, 'vllm-paper': 128 } },
    curves: {
      symphony: { 64: run(12), 128: run(14), 256: run(19), 512: run(33), 1024: run(73) },
      'vllm-paper': { 64: run(14), 128: run(19.5), 256: run(35.5), 512: run(69), 1024: run(134) },
    },
    setup: { run: SYMPHONY_RUN },
  };
  it('interpolates each system between its last count inside the SLO and the next', () => {
    const cause = symphonyCauses(figures)['symphony.users_vs_vllm_at_slo'];
    // symphony: 256 + (21 − 19) / (33 − 19) · 256 = 292.6; vllm-paper: 128 + (21 − 19.5) / 16 · 128 = 140.
    expect(cause).toContain('near 293 users (symphony) and 140 (vllm-paper), a ratio of 2.09');
    expect(cause).toContain('19.5 ms at 128 users, inside the SLO (21 ms');
  });
});
