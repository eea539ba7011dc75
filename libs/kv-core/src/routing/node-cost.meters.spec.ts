import { NodeCostMeters } from './node-cost.meters.js';

describe(NodeCostMeters.name, () => {
  it('reports the pass fit and the slot time together, each once measured', () => {
    const m = new NodeCostMeters(16);
    expect(m.costs()).toEqual({});
    for (let i = 0; i < 40; i++)
      m.pass({ ms: 30 * (2 + (i % 3)), computedTokens: 256 * (2 + (i % 3)), hostTokens: 0, ssdTokens: 0, peerTokens: 0 });
    for (let i = 0; i < 8; i++) m.sequenceFinished(800);
    expect(m.passes).toBe(40);
    expect(m.costs()).toEqual({ recomputeMsPerChunk: expect.any(Number), slotMs: 50 });
    expect(m.costs().recomputeMsPerChunk).toBeGreaterThan(28);
  });
});
