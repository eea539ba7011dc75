import { ServiceMetrics } from '@mnemo/service-kit';
import { PassCosts, type PassSeq } from './pass.costs.js';

const seq = (promptTokens: number, cachedTokens: number, restored?: PassSeq['restored']): PassSeq => ({
  promptTokens,
  cachedTokens,
  ...(restored ? { restored } : {}),
});

describe(PassCosts.name, () => {
  it('learns the recompute cost from computed passes and exports it', async () => {
    const metrics = new ServiceMetrics('pass-costs-test');
    const costs = new PassCosts(metrics);
    // 30 ms per chunk computed, 2 ms per pass.
    for (let i = 0; i < 40; i++) costs.prefillPass([seq(512 + 256 * (i % 3), 0)], 2 + 30 * (2 + (i % 3)));
    expect(costs.passes).toBe(40);
    // Pulled a little towards the prior (16) by the ridge.
    expect(costs.costs().recomputeMsPerChunk).toBeGreaterThan(28.5);
    expect(costs.costs().recomputeMsPerChunk).toBeLessThan(30.5);
    const values = (await metrics.registry.getSingleMetric('mnemo_node_measured_cost_ms')!.get()).values;
    // Restores were never measured: no series claims a figure for them.
    expect(values).toEqual([{ labels: { term: 'recompute' }, value: costs.costs().recomputeMsPerChunk }]);
  });

  it('learns what attention adds over long prompts and exports it beside recompute', async () => {
    const metrics = new ServiceMetrics('pass-costs-attention-test');
    const costs = new PassCosts(metrics);
    // 20 ms per computed chunk plus 0.2 per chunk pair: prompts of 8 to 96 chunks, some behind a cached prefix.
    for (let i = 0; i < 60; i++) {
      const [prompt, cached] = [
        [8, 0],
        [40, 0],
        [96, 0],
        [96, 64],
      ][i % 4]!;
      const fresh = prompt - cached;
      costs.prefillPass([seq(prompt * 256, cached * 256)], 20 * fresh + 0.2 * (fresh * cached + (fresh * fresh) / 2));
    }
    expect(costs.costs().attentionMsPerChunkPair).toBeCloseTo(0.2, 2);
    const values = (await metrics.registry.getSingleMetric('mnemo_node_measured_cost_ms')!.get()).values;
    expect(values.map((v) => v.labels.term).sort()).toEqual(['attention', 'recompute']);
  });

  it('reports how often a full batch frees a slot, once enough sequences finished', () => {
    const costs = new PassCosts(undefined, 16);
    for (let i = 0; i < 7; i++) costs.sequenceFinished(800);
    expect(costs.costs().slotMs).toBeUndefined();
    costs.sequenceFinished(800);
    expect(costs.costs().slotMs).toBe(50);
  });

  it.each<[string, PassSeq[], number]>([
    ['an empty pass is not a measurement', [], 0],
    ['a pass of cached prompts only: nothing computed or restored is no measurement', [seq(512, 512)], 0],
    ['prompts add up, restored tokens by tier', [seq(512, 0), seq(600, 512, { host: 256, ssd: 256, peer: 0 })], 1],
  ])('%s', (_name, seqs, passes) => {
    const costs = new PassCosts();
    costs.prefillPass(seqs, 10);
    expect(costs.passes).toBe(passes);
  });
});
