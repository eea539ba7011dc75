import { loadTrace } from './mooncake.trace.js';
import type { PrefillCosts } from './mooncake.hardware.js';
import { runPrefillPool, type PrefillPoolConfig, type TracePolicy } from './prefill-pool.sim.js';
import { capacityCurve } from './trace.experiment.js';

const line = (timestamp: number, ids: number[]) =>
  JSON.stringify({ timestamp, input_length: ids.length * 512, output_length: 1, hash_ids: ids });
// 256-token blocks: one chunk a block. r0 caches 4 chunks on the first node; r1 (20 unrelated chunks)
// then keeps that node busy until 300; r2 at 110 shares r0's 4 chunks and adds one.
const TRACE = loadTrace(
  [
    line(0, [0, 1, 2, 3]),
    line(
      100,
      Array.from({ length: 20 }, (_, i) => 100 + i),
    ),
    line(110, [0, 1, 2, 3, 4]),
  ].join('\n'),
  {
    tokensPerBlock: 256,
  },
);
/** 10 ms of prefill a chunk whatever the prefix, free DRAM reads, 1 ms a chunk between nodes. */
const costs: PrefillCosts = { prefillMs: (t) => (t / 256) * 10, hostChunkMs: 0, ssdChunkMs: 0, peerChunkMs: 1, chunkBytes: 1 };
const config = (policy: TracePolicy): PrefillPoolConfig => ({
  nodes: 2,
  hostTokens: 100 * 256,
  ssdTokens: 0,
  policy,
  threshold: 2,
  timeScale: 1,
  costs,
  recomputeMsPerChunk: 10,
  seed: 1,
});
const INPUT = 4 + 20 + 5;

describe(runPrefillPool.name, () => {
  it.each<[TracePolicy, string, number[], number, number]>([
    ['local', 'r2 avoids the busy holder and recomputes all 5 chunks', [40, 200, 50], 0, 0],
    [
      'conductor',
      'r2 goes to the idle node and fetches the 4 chunks (4 ms, while it would queue) before 1 chunk of prefill',
      [40, 200, 14],
      4 / INPUT,
      4,
    ],
    ['least-loaded', 'KV ignored: r2 to the idle node, recomputed', [40, 200, 50], 0, 0],
    ['symphony', 'per chunk the cheapest: the peer (1 ms) beats recomputing (10 ms)', [40, 200, 14], 4 / INPUT, 4],
    ['llmd', "prefix score 3 × 4/5 outweighs the queue's 2: r2 waits behind r1 on the holder", [40, 200, 200], 4 / INPUT, 0],
  ])('%s: %s', (policy, _why, ttfts, hit, moved) => {
    const r = runPrefillPool(TRACE.requests, config(policy));
    expect(r.ttft_mean_ms).toBeCloseTo(ttfts.reduce((s, x) => s + x, 0) / 3, 1);
    expect(r.ttft_p99_ms).toBeCloseTo(Math.max(...ttfts), 1);
    expect(r.hit_rate).toBeCloseTo(hit, 4);
    expect(r.transferred_chunks).toBe(moved);
  });

  it('spreads random picks by its seed, the same run for the same seed', () => {
    const a = runPrefillPool(TRACE.requests, config('random'));
    expect(runPrefillPool(TRACE.requests, config('random'))).toEqual(a);
    expect(a.requests).toBe(3);
  });

  it('offers the pool its prefill GPU time over the arrivals span', () => {
    // local: 290 ms of prefill on 2 nodes over the 110 ms the arrivals span.
    expect(runPrefillPool(TRACE.requests, config('local')).offered_load).toBeCloseTo(290 / (2 * 110), 3);
  });

  it('counts reused tokens out of the prefill GPU time', () => {
    expect(runPrefillPool(TRACE.requests, config('conductor')).prefill_gpu_mean_ms).toBeCloseTo((40 + 200 + 10) / 3, 1);
    expect(runPrefillPool(TRACE.requests, config('local')).prefill_gpu_mean_ms).toBeCloseTo((40 + 200 + 50) / 3, 1);
  });

  it('refuses a pool with no nodes', () => {
    expect(() => runPrefillPool(TRACE.requests, { ...config('local'), nodes: 0 })).toThrow(/nodes/);
  });
});

describe(capacityCurve.name, () => {
  it.each([
    [1 * 256, 0],
    // r1's 20 chunks push out all 4 of r0's.
    [4 * 256, 0],
    // One short: r0's last chunk goes first (kv-core's order: later chunks of the least recent request).
    [23 * 256, 3 / INPUT],
    [24 * 256, 4 / INPUT],
    [1000 * 256, 4 / INPUT],
  ])('a cache of %s tokens serves %s of the prompt tokens', (capacity, hit) => {
    const [p] = capacityCurve(TRACE.requests, [capacity]);
    expect(p!.hit_rate).toBeCloseTo(hit, 4);
  });
});
