import { blockElements, minimumElasticUnit } from '@mnemo/kv-core';
import { kvBytesPerToken, MODELS } from '../../costs/hardware.tables.js';
import { kvBudgetBytes } from '../../costs/memory.budget.js';
import type { TargetCheck } from '../shared/experiment.ports.js';
import { maxContextAt } from './max-context.experiment.js';
import { interferenceAtLength, swiftcacheExperiment } from './swiftcache.experiment.js';
import { swiftcacheRobustness } from './swiftcache.robustness.js';
import { kvShape, SWIFTCACHE_SETUP } from './swiftcache.setup.js';
import { runTtft, ttftWorkload } from './ttft.experiment.js';

// A small configuration: two rates, 200 requests each.
const small = { ...SWIFTCACHE_SETUP, ratesPerS: [0.5, 1.5], requests: 200 };
const lwm = MODELS['lwm-7b'];

describe('SwiftCache on the twin', () => {
  const run = swiftcacheExperiment(small);

  it('writes the three headline keys and is the same on every run', () => {
    for (const k of ['max_context_vs_chunked8k', 'ttft_p99_vs_offload', 'worker_interference'] as const)
      expect(typeof run.swiftcache[k]).toBe('number');
    expect(swiftcacheExperiment(small)).toEqual(run);
  });

  it("lends what kv-core's coordinator lends: whole LCM units, all of an idle worker's region", () => {
    const at96 = maxContextAt(SWIFTCACHE_SETUP.memoryPoints[0]!);
    const worker = 'worker1-qwen3-8b';
    const unit = minimumElasticUnit(kvShape(lwm), kvShape(MODELS['qwen3-8b']));
    const lent = at96.lent_master_blocks[worker]!;
    expect(lent % unit.masterBlocks).toBe(0);
    // An idle worker keeps less than one unit of its region.
    const keptElements = at96.region_blocks[worker]! * blockElements(kvShape(MODELS['qwen3-8b'])) - lent * blockElements(kvShape(lwm));
    expect(keptElements).toBeGreaterThanOrEqual(0);
    expect(keptElements).toBeLessThan(unit.elements);
  });

  it("holds a longer context than vLLM's 8K chunk alone, the stream's two planes a little less than Eq. 5's one", () => {
    const at96 = maxContextAt(SWIFTCACHE_SETUP.memoryPoints[0]!);
    expect(at96.vllm.chunked_8k).toBe(Math.floor(kvBudgetBytes(96e9, lwm, 8192, { utilization: 0.95 }) / kvBytesPerToken(lwm) / 16) * 16);
    expect(at96.swiftcache.tokens).toBeGreaterThan(at96.vllm.chunked_8k);
    expect(at96.eq5.tokens).toBeGreaterThan(at96.swiftcache.tokens);
    expect(at96.vllm.chunked_8k).toBeGreaterThan(at96.vllm.chunked_32k);
  });

  it('a worker whose weights leave no KV lends nothing (Qwen3-14B at 32 GB)', () => {
    const at32 = maxContextAt(SWIFTCACHE_SETUP.memoryPoints[2]!);
    expect(at32.lent_master_blocks['worker0-qwen3-14b']).toBe(0);
    expect(at32.lent_master_blocks['worker1-qwen3-8b']).toBeGreaterThan(0);
  });

  it('serves a history found in the second tier faster over NVLink than over PCIe, and the same requests to both', () => {
    const work = ttftWorkload(0.5, small);
    expect(work.requests.every((r) => r.history >= 20_480)).toBe(true);
    const offload = runTtft('offload', work, small);
    const lendIdle = runTtft('swiftcache-lend-idle', work, small);
    expect(offload.history_in.recomputed).toBe(0);
    expect(lendIdle.ttft_p99_ms).toBeLessThan(offload.ttft_p99_ms);
    expect(lendIdle.lent_gb).toBeGreaterThan(0);
    // Counting recently served sessions as demand lends at least what live requests alone do.
    expect(runTtft('swiftcache', work, small).lent_gb).toBeGreaterThanOrEqual(runTtft('swiftcache-live-only', work, small).lent_gb!);
  });

  it("charges a worker's HBM the master's bytes over the request's time, under NVLink ÷ HBM", () => {
    const one = interferenceAtLength(65_536, [1], small);
    const bound = (200e9 * 0.878) / (4000e9 * 0.8);
    expect(one.hbm_share).toBeLessThanOrEqual(bound + 1e-3);
    expect(interferenceAtLength(65_536, [0.5, 0.5], small).hbm_share).toBeCloseTo(one.hbm_share / 2, 3);
  });

  it('reruns the headline keys with each hardware figure at ±20%: NVLink moves interference, HBM size the context', () => {
    const asked = new Set<string>();
    const judged: TargetCheck = (path) => (asked.add(path), true);
    const r = swiftcacheRobustness(judged, {
      ...small,
      memoryPoints: SWIFTCACHE_SETUP.memoryPoints.slice(0, 1),
      ratesPerS: [1],
      requests: 40,
    });
    expect(r.rows.map((row) => `${row.figure}@${row.scale}`)).toEqual(
      ['gpu_flops', 'hbm_bandwidth', 'gpu_memory', 'nvlink', 'pcie'].flatMap((f) => [`${f}@0.8`, `${f}@1.2`]),
    );
    const nv = r.rows.filter((row) => row.figure === 'nvlink');
    expect(nv[1]!.worker_interference).toBeGreaterThan(nv[0]!.worker_interference);
    const mem = r.rows.filter((row) => row.figure === 'gpu_memory');
    expect(mem[0]!.max_context_vs_chunked8k).not.toBe(mem[1]!.max_context_vs_chunked8k);
    // Every headline of every row is judged at its results path.
    expect(r.targets_met_in_every_case).toBe(true);
    expect([...asked]).toEqual(['swiftcache.max_context_vs_chunked8k', 'swiftcache.ttft_p99_vs_offload', 'swiftcache.worker_interference']);
  });
});
