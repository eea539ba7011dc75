import type { TargetCheck } from '../shared/experiment.ports.js';
import { poolingExperiment } from './pooling.experiment.js';
import { poolingRobustness } from './pooling.robustness.js';
import { POOLING_SETUP } from './pooling.setup.js';
import { poolingRequestTimes as requestTimes, ssdRetrievalMs } from './pooling.times.js';

const K = 131_072;
// Llama-3.1-8B: 128 KiB of KV per token; LMCache chunks of 256 tokens.
const kvBytes = K * 128 * 1024;
const chunks = K / 256;
// The registered bands are testkit's (tools/twin/pooling.mjs passes them in); these rows are checked, not judged.
const anyTarget: TargetCheck = () => true;

describe(poolingExperiment.name, () => {
  const run = poolingExperiment();

  it('writes every key and a TTFT and blocked I/O per configuration and length, the same on every run', () => {
    for (const k of ['ttft_128k_vs_file_store', 'blocked_io_128k_vs_file_store', 'striped_vs_single_device'])
      expect(typeof run.pooling[k as 'filesystem_factor']).toBe('number');
    expect(Object.keys(run.pooling.ablation_128k_ttft_vs_full).sort()).toEqual(['orchestrator-only', 'passthrough-only']);
    for (const curve of Object.values(run.curves))
      for (const n of POOLING_SETUP.contexts) {
        const t = curve[n];
        expect(t.ttft_ms).toBeGreaterThan(t.blocked_io_ms);
        expect(t.blocked_io_ms).toBeGreaterThanOrEqual(0);
        expect(t.kv_bytes).toBe(n * 128 * 1024);
      }
    expect(poolingExperiment()).toEqual(run);
  });

  it('charges the file store the filesystem factor on SSD reads (§III-C: 84% of the time), and the passthrough pool none', () => {
    const allSsd = { ...POOLING_SETUP, hostPoolBytes: 0 };
    const noFs = { ...allSsd, filesystemShare: 0 };
    // At queue depth 1 every chunk file pays the drive's command latency, then the bytes at its bandwidth.
    const deviceMs = chunks * POOLING_SETUP.nvme.dispatchMs + kvBytes / POOLING_SETUP.nvme.bytesPerMs;
    const extra = requestTimes('lmcache', K, allSsd).blocked_io_ms - requestTimes('lmcache', K, noFs).blocked_io_ms;
    expect(extra).toBeCloseTo(deviceMs * (1 / (1 - 0.84) - 1), 0);
    expect(requestTimes('pool', K, allSsd)).toEqual(requestTimes('pool', K, noFs));
    expect(run.pooling.filesystem_factor).toBe(6.25);
  });

  it("reads 128K tokens of KV from two SSDs striped by kv-core's placement in about half the time of one", () => {
    const one = ssdRetrievalMs(K, 1);
    const two = ssdRetrievalMs(K, 2);
    expect(one).toBeCloseTo(kvBytes / POOLING_SETUP.nvme.bytesPerMs + POOLING_SETUP.nvme.dispatchMs, 3);
    expect(one / two).toBeGreaterThan(1.8);
    expect(run.pooling.striped_vs_single_device).toBeCloseTo(one / two, 2);
  });

  it('orders the file stores as the paper does: each optimisation helps, the pool beats them all at 128K', () => {
    const t = run.pooling.ttft_128k_s;
    expect(t.lmcache).toBeGreaterThan(t['lmcache-lp']);
    expect(t['lmcache-lp']).toBeGreaterThan(t['lmcache-lp-async']);
    expect(t['lmcache-lp-async']).toBeGreaterThan(t.pool);
    expect(t['orchestrator-only']).toBeGreaterThan(t.pool);
    expect(t['passthrough-only']).toBeGreaterThan(t.pool);
  });

  it("overlaps LMCache's layer-wise loads with compute: with a long question, most of its compute hides under retrieval", () => {
    const long = { ...POOLING_SETUP, questionTokens: 16_384 };
    const plain = requestTimes('lmcache', K, long);
    const lp = requestTimes('lmcache-lp', K, long);
    expect(lp.compute_ms).toBeGreaterThan(1000);
    // Without pipelining TTFT = retrieval + compute; with it, all but about one layer's compute is hidden.
    expect(plain.ttft_ms - lp.ttft_ms).toBeGreaterThan(0.9 * lp.compute_ms);
  });

  it("checks the paper's published absolutes (§V-B at 128K, §III on the mixture-of-experts row): error = twin ÷ paper − 1", () => {
    const c = run.baseline_check;
    expect(c.v_b_ttft_128k_s_pool.paper).toBe(5.6);
    expect(c.v_b_ttft_128k_s_pool.twin).toBeCloseTo(run.pooling.ttft_128k_s.pool, 2);
    expect(c.iii_ttft_128k_qwen3_30b_a3b_s.paper).toBe(30.7);
    for (const x of Object.values(c)) if (x.twin !== null) expect(x.error).toBeCloseTo(x.twin / x.paper - 1, 2);
  });

  it('reruns the headline keys with each hardware figure at ±20%, and the filesystem share apart', () => {
    const r = poolingRobustness(anyTarget);
    expect(r.rows.map((row) => `${row.figure}@${row.scale}`)).toEqual(
      ['gpu_flops', 'pcie', 'ddr4', 'nvme'].flatMap((f) => [`${f}@0.8`, `${f}@1.2`]),
    );
    // Slower drives leave the file store's filesystem time a larger share: the ratio moves with them.
    const nvme = r.rows.filter((row) => row.figure === 'nvme');
    expect(nvme[0]!.ttft_128k_vs_file_store).not.toBe(nvme[1]!.ttft_128k_vs_file_store);
    expect(r.filesystem_share.rows.map((row) => row.share)).toEqual([0.84 * 0.8, 0.95]);
    expect(r.filesystem_share.blocked_io_128k_vs_file_store_range[0]).toBeLessThan(run.pooling.blocked_io_128k_vs_file_store);
  });

  it('judges every row against the targets it is given', () => {
    expect(poolingRobustness(anyTarget).targets_met_in_every_case).toBe(true);
    const asked: string[] = [];
    const none: TargetCheck = (path) => (asked.push(path), false);
    expect(poolingRobustness(none).targets_met_in_every_case).toBe(false);
    expect(asked).toEqual(['pooling.ttft_128k_vs_file_store']);
  });
});
