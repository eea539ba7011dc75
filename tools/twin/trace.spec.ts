import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEFAULT_TRACE_EXPERIMENT,
  loadTrace,
  MOONCAKE_CONVERSATION_PAPER,
  MOONCAKE_TABLE2_CONVERSATION,
  TRACE_BLOCK_TOKENS,
  traceExperiment,
  traceStats,
  traceText,
  unknownPaper,
} from '@mnemo/twin';

// The first requests of the published trace (a few seconds of traffic): the whole trace is the twin command's.
const text = traceText(readFileSync(join(process.cwd(), 'bench/traces/mooncake-conversation_trace.jsonl.gz')));
const trace = loadTrace(text, { limit: 150 });

describe('the published trace', () => {
  it('loads gzipped, with its lengths and sharing', () => {
    const s = traceStats(loadTrace(text, { limit: 200 }));
    expect(s.requests).toBe(200);
    expect(trace.requests[0]!.blockIds.length).toBe(Math.ceil(trace.requests[0]!.inputTokens / TRACE_BLOCK_TOKENS));
    // The first minute already shares system prompts and earlier turns; lengths are Table 2's order.
    expect(s.max_hit_rate).toBeGreaterThan(0.05);
    expect(s.input_mean).toBeGreaterThan(MOONCAKE_TABLE2_CONVERSATION.input_mean / 3);
  });
});
// On 4 nodes.
const o = { ...DEFAULT_TRACE_EXPERIMENT, nodes: 4, fitSteps: 6, thresholds: [1.5, 4], fig10: { nodes: 3, hostTokens: 3_000_000 } };

describe(traceExperiment.name, () => {
  it('fits the load to a local cache-aware TTFT on request and reports every key against the paper', () => {
    const seen: string[] = [];
    const r = traceExperiment(trace, MOONCAKE_CONVERSATION_PAPER, { ...o, fitTtftMs: 5000 }, (_i, _n, label) => seen.push(label));
    expect(r.setup.fitted).toMatchObject({ parameter: 'time_scale', target_ms: 5000 });
    expect(Math.abs(r.setup.fitted!.reached_ms as number) - 5000).toBeLessThan(5000);
    expect(r.paper_check.fig5_local_ttft_ms).toMatchObject({ paper: 3580, twin: r.policies.local!.ttft_mean_ms });
    expect(Object.keys(r.policies)).toEqual(['random', 'least-loaded', 'local', 'conductor', 'llmd', 'symphony']);
    for (const p of Object.values(r.policies)) {
      expect(p.ttft_p99_ms).toBeGreaterThanOrEqual(p.ttft_mean_ms);
      expect(p.hit_rate).toBeLessThanOrEqual(r.trace.max_hit_rate + 1e-9);
    }
    expect(r.policies.local!.transferred_chunks).toBe(0);
    expect(r.paper_check.fig5_random_over_local.paper).toBe(5.49);
    expect(r.paper_check.fig5_random_over_local.twin).toBeCloseTo(r.policies.random!.ttft_mean_ms / r.policies.local!.ttft_mean_ms, 2);
    expect([1.5, 4]).toContain(r.setup.threshold.best);
    // The capacity curve rises to the maximum.
    const over = r.fig9.curve.map((p) => p.over_max);
    expect(over).toEqual([...over].sort((a, b) => a - b));
    expect(over.at(-1)).toBeCloseTo(1, 4);
    expect(seen.at(-1)).toBe('done');
  });

  it("replays the paper's trace at its own timestamps unless asked to fit", () => {
    const r = traceExperiment(trace, MOONCAKE_CONVERSATION_PAPER, { ...o, policies: ['local'], thresholds: [1.5] });
    expect(r.setup.fitted).toBeNull();
    expect(r.setup.time_scale).toBe(1);
    expect(r.paper_check.fig5_local_ttft_ms.paper).toBe(3580);
  });

  it('leaves the paper column null for a trace it does not know, at the given time scale', () => {
    const r = traceExperiment(trace, unknownPaper(null), { ...o, policies: ['local'], timeScale: 2 });
    expect(r.setup.fitted).toBeNull();
    expect(r.setup.time_scale).toBe(2);
    expect(r.paper_check.fig5_random_over_local).toEqual({ paper: null, twin: null, error: null, within_25pct: null });
    expect(r.paper_check.fig10_global_over_local_hit.paper).toBeNull();
  });
});
