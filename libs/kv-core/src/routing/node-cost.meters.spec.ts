import { NodeCostMeters } from './node-cost.meters.js';
import { DEFAULT_ROUTING_COSTS } from './route.types.js';

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

describe('NodeCostMeters.prefillBusyMs', () => {
  // Nothing measured yet: the default recompute price per chunk, no attention term.
  const perChunk = DEFAULT_ROUTING_COSTS.recomputeMsPerChunk;
  it.each<[string, { promptTokens: number; cachedTokens: number }[], number, number]>([
    ['no pass in flight', [], 0, 0],
    ['a 4-chunk prompt with nothing cached, just started', [{ promptTokens: 1024, cachedTokens: 0 }], 0, 4],
    ['half of it cached', [{ promptTokens: 1024, cachedTokens: 512 }], 0, 2],
    [
      'two sequences add up',
      [
        { promptTokens: 512, cachedTokens: 0 },
        { promptTokens: 768, cachedTokens: 256 },
      ],
      0,
      4,
    ],
  ])('%s', (_name, seqs, elapsed, chunks) => {
    const m = new NodeCostMeters(4);
    if (seqs.length > 0) m.passStarted(seqs, 1000);
    expect(m.prefillBusyMs(1000 + elapsed)).toBeCloseTo(chunks * perChunk, 6);
  });

  it('counts down as the pass runs, and is 0 once it ends', () => {
    const m = new NodeCostMeters(4);
    m.passStarted([{ promptTokens: 2560, cachedTokens: 0 }], 0);
    const full = m.prefillBusyMs(0);
    expect(m.prefillBusyMs(full / 2)).toBeCloseTo(full / 2, 6);
    expect(m.prefillBusyMs(full * 2)).toBe(0);
    m.passEnded();
    expect(m.prefillBusyMs(0)).toBe(0);
  });

  it.each<[string, boolean, { promptTokens: number; cachedTokens: number }[], number]>([
    ['queued work alone, nothing in flight', false, [{ promptTokens: 1024, cachedTokens: 256 }], 3],
    ['queued work on top of the pass in flight (4 chunks)', true, [{ promptTokens: 512, cachedTokens: 0 }], 4 + 2],
    ['a queue of nothing adds nothing', true, [], 4],
  ])('%s', (_name, inFlight, queued, chunks) => {
    const m = new NodeCostMeters(4);
    if (inFlight) m.passStarted([{ promptTokens: 1024, cachedTokens: 0 }], 0);
    expect(m.prefillBusyMs(0, queued)).toBeCloseTo(chunks * perChunk, 6);
  });

  it('does not count queued work down: it has not started', () => {
    const m = new NodeCostMeters(4);
    const queued = [{ promptTokens: 1024, cachedTokens: 0 }];
    expect(m.prefillBusyMs(5_000, queued)).toBeCloseTo(m.prefillBusyMs(0, queued), 6);
  });
});
