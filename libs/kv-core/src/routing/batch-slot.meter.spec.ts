import { candidate } from '../testing/route.candidates.js';
import { BatchSlotMeter } from './batch-slot.meter.js';
import { batchSlotWaitMs } from './route.load.js';
import { DEFAULT_ROUTING_COSTS, type RouteCandidate } from './route.types.js';

const node = (over: Partial<RouteCandidate> = {}): RouteCandidate => candidate('a', over);

describe(BatchSlotMeter.name, () => {
  it('reports nothing before enough sequences, then the mean residency over the batch size', () => {
    const m = new BatchSlotMeter(16);
    for (let i = 0; i < 7; i++) m.finished(800);
    expect(m.slotMs()).toBeUndefined();
    m.finished(800);
    expect(m.slotMs()).toBe(50);
  });

  it('follows a change of traffic', () => {
    const m = new BatchSlotMeter(4, 0.1);
    for (let i = 0; i < 20; i++) m.finished(400);
    for (let i = 0; i < 60; i++) m.finished(1200);
    expect(m.slotMs()!).toBeGreaterThan(290);
  });

  it.each([NaN, -1, Infinity])('ignores a residency of %s', (x) => {
    const m = new BatchSlotMeter(1, 1, 1);
    m.finished(x);
    expect(m.slotMs()).toBeUndefined();
  });

  it('refuses a bad batch size', () => {
    expect(() => new BatchSlotMeter(0)).toThrow(RangeError);
  });
});

describe(batchSlotWaitMs.name, () => {
  const costs = DEFAULT_ROUTING_COSTS;
  it.each<[string, Partial<RouteCandidate>, number]>([
    ['a free slot: no wait', { running: 15, maxBatch: 16, costs: { slotMs: 50 } }, 0],
    ['the last slot taken: one turn', { running: 16, maxBatch: 16, costs: { slotMs: 50 } }, 50],
    ['two queued behind a full batch: three turns', { running: 16, waiting: 2, maxBatch: 16, costs: { slotMs: 50 } }, 150],
    ['a live reservation counts at its weight', { running: 16, reservations: 2, maxBatch: 16, costs: { slotMs: 50 } }, 100],
    ['no batch size reported', { running: 30, costs: { slotMs: 50 } }, 0],
    ['no slot time measured', { running: 30, maxBatch: 16 }, 0],
  ])('%s', (_name, over, ms) => {
    expect(batchSlotWaitMs(node(over), costs)).toBe(ms);
  });
});
