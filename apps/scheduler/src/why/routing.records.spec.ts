import { RoutingRecords, type RoutingRecord } from './routing.records.js';

const rec = (attempt: number, atUnixMs: number, nodeId: string): RoutingRecord => ({
  requestId: 'r1',
  tenant: 't',
  model: 'm',
  nodeId,
  attempt,
  promptTokens: 10,
  chunkKeys: [],
  atUnixMs,
  chunks: [],
});

describe('RoutingRecords.adopt (records shared between scheduler replicas)', () => {
  it.each([
    ['a later attempt wins, whatever its time', [rec(0, 500, 'a'), rec(1, 100, 'b')], 'b'],
    ['a stale first attempt arriving late loses', [rec(1, 100, 'b'), rec(0, 500, 'a')], 'b'],
    ['same attempt: the later routing wins', [rec(0, 100, 'a'), rec(0, 200, 'b')], 'b'],
    ['same attempt, later routing arriving first: kept', [rec(0, 200, 'b'), rec(0, 100, 'a')], 'b'],
    ['a full tie: the greater node id, in either order', [rec(0, 100, 'b'), rec(0, 100, 'a')], 'b'],
    ['a full tie, other order', [rec(0, 100, 'a'), rec(0, 100, 'b')], 'b'],
  ])('%s', (_name, order, winner) => {
    const r = new RoutingRecords(10, 60_000, 10, () => 0);
    for (const x of order) r.adopt(x);
    expect(r.records.get('r1')?.nodeId).toBe(winner);
  });
});
