import type { Evaluation } from './plan.search.js';
import { planHardware } from './plan.setup.js';
import { planTable } from './plan.table.js';
import { ttftFloorMs, verifyWhole } from './plan.verify.js';

describe('plan verification on the whole cluster, and the table', () => {
  // A model whole cluster: P99 TTFT falls with instances towards `floor`; meets from `need` on.
  const wholeCluster = (need: number, p99At: (n: number) => number = (n) => 20_000 / n) => {
    const ran: number[] = [];
    const run = (n: number): Evaluation => {
      ran.push(n);
      const meets = n >= need;
      return { meets, p99: p99At(n), tpotOk: true, summary: { ttft_p99_ms: p99At(n), tpot_mean_ms: 19, requests: 300 } };
    };
    return { run, ran };
  };
  const verify = { max: 256, floorGain: 0.1, sloTtftMs: 2500 };

  it('keeps a cell answer the whole cluster meets, with its one run', () => {
    const { run, ran } = wholeCluster(7);
    expect(verifyWhole(run, { ...verify, start: 7 })).toMatchObject({ instances: 7, reason: null, runs: [{ instances: 7, meets: true }] });
    expect(ran).toEqual([7]);
  });

  it('steps a cell answer the whole cluster misses up by doubling, then bisects to the fewest that meet', () => {
    const { run, ran } = wholeCluster(11);
    const v = verifyWhole(run, { ...verify, start: 7 });
    expect(v.instances).toBe(11);
    // 7 misses, 14 meets, then 10 misses, 12 meets, 11 meets: every run reported, none twice.
    expect(ran).toEqual([7, 14, 10, 12, 11]);
    expect(v.runs.map((r) => [r.instances, r.meets])).toEqual([
      [7, false],
      [14, true],
      [10, false],
      [12, true],
      [11, true],
    ]);
  });

  it('reports the policy unable to meet the SLO only from whole-cluster runs: when doubling stops cutting P99 TTFT', () => {
    const flat = wholeCluster(1e9, (n) => 3000 + 1000 / n);
    const v = verifyWhole(flat.run, { ...verify, start: 7 });
    expect(v).toMatchObject({ instances: null, reason: expect.stringMatching(/floor at this load/) });
    expect(flat.ran).toEqual([7, 14]);
    const bound = wholeCluster(1e9);
    expect(verifyWhole(bound.run, { ...verify, start: 7, max: 20 }).reason).toMatch(/at 20 instances/);
    expect(bound.ran).toEqual([7, 14, 20]);
  });

  it("bounds P99 TTFT below by the P99 of each request's uncached prefill", () => {
    const hw = planHardware({ gpu: 'A100', model: 'llama-3.1-8b', instances: 1, hostGb: 0, ssdTb: 0 });
    const tokens = (n: number) => new Array<number>(n).fill(1);
    // 99 short sessions and one whose first turn pastes 40K tokens: the P99 of 100 requests is the 99th, a short one.
    const short = { system: tokens(300), doc: tokens(100), turns: [{ user: tokens(50), reply: 100 }] };
    const long = { ...short, doc: tokens(40_000) };
    const few = ttftFloorMs([...Array(99).fill(short), long], hw);
    const many = ttftFloorMs([...Array(98).fill(short), long, long], hw);
    expect(few).toBeLessThan(100);
    expect(many).toBeGreaterThan(2000);
    // A second turn on a cached history costs only its own tokens.
    const twoTurns = { ...long, turns: [...long.turns, { user: tokens(50), reply: 100 }] };
    expect(ttftFloorMs([twoTurns], hw, { p: 0.5 })).toBeLessThan(ttftFloorMs([long], hw) / 10);
  });

  it('tells in the table the verified answer beside the cell estimate, and why a policy cannot meet', () => {
    const best = {
      instances: 11,
      nodes: 3,
      host_gb: 256,
      ssd_tb: 4,
      cost_usd_per_hour: 55,
      ttft_p99_ms: 2100,
      tpot_mean_ms: 19,
      requests: 300,
    };
    const estimate = { ...best, instances: 7, ttft_p99_ms: 1300 };
    const runs = [
      { instances: 7, meets: false },
      { instances: 14, meets: true },
    ];
    const table = planTable({
      plans: {
        symphony: {
          best,
          slice_estimate: estimate,
          ttft_floor_ms: 1952,
          reason: null,
          tried: [],
          verification: { whole_cluster: true, meets: true, runs },
        },
        llmd: {
          best: null,
          slice_estimate: estimate,
          ttft_floor_ms: 1952,
          reason: 'whole cluster: P99 TTFT 9000 ms',
          tried: [],
          verification: { whole_cluster: true, meets: false, runs },
        },
      },
    } as never);
    expect(table).toMatch(/symphony +11 .* 7 \(1300 ms\) +1952 +0 \+ 2 whole/);
    expect(table).toMatch(/llmd +cannot meet/);
    expect(table).toMatch(/llmd: whole cluster: P99 TTFT 9000 ms/);
  });
});
