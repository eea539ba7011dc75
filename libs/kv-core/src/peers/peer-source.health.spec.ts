import { choosePeerPrefix } from './peer-source.policy.js';
import { FAILED_SOURCE_MS, PeerSourceHealth, type PeerFailure } from './peer-source.health.js';

const offer = { chunkKeys: ['k0', 'k1', 'k2', 'k3'] };
type Step = [source: string, failure: PeerFailure, atMs: number];

describe(PeerSourceHealth.name, () => {
  it.each<[string, Step[], number, { usableA: boolean; usableB: boolean; offeredA: string[]; offeredB: string[] }]>([
    ['nothing failed', [], 0, { usableA: true, usableB: true, offeredA: offer.chunkKeys, offeredB: offer.chunkKeys }],
    [
      'an unreachable peer is left out whole',
      [['a', { kind: 'unreachable' }, 0]],
      1000,
      { usableA: false, usableB: true, offeredA: offer.chunkKeys, offeredB: offer.chunkKeys },
    ],
    [
      'a stale key leaves out that key only, and only at that peer',
      [['a', { kind: 'stale', key: 'k2' }, 0]],
      1000,
      { usableA: true, usableB: true, offeredA: ['k0', 'k1', 'k3'], offeredB: offer.chunkKeys },
    ],
    [
      'both are forgotten after the TTL',
      [
        ['a', { kind: 'unreachable' }, 0],
        ['b', { kind: 'stale', key: 'k0' }, 0],
      ],
      FAILED_SOURCE_MS,
      { usableA: true, usableB: true, offeredA: offer.chunkKeys, offeredB: offer.chunkKeys },
    ],
    [
      'a later failure restarts the TTL',
      [
        ['b', { kind: 'stale', key: 'k0' }, 0],
        ['b', { kind: 'stale', key: 'k0' }, 20_000],
      ],
      FAILED_SOURCE_MS + 1,
      { usableA: true, usableB: true, offeredA: offer.chunkKeys, offeredB: ['k1', 'k2', 'k3'] },
    ],
  ])('%s', (_name, steps, at, want) => {
    const h = new PeerSourceHealth();
    for (const [s, f, t] of steps) h.failed(s, f, t);
    expect({
      usableA: h.usable('a', at),
      usableB: h.usable('b', at),
      offeredA: h.offered('a', offer, at).chunkKeys,
      offeredB: h.offered('b', offer, at).chunkKeys,
    }).toEqual(want);
  });

  it('keeps the offer object when nothing is left out', () => {
    const h = new PeerSourceHealth();
    h.failed('a', { kind: 'stale', key: 'zz' }, 0);
    expect(h.offered('a', offer, 1)).toBe(offer);
  });

  it('forgets the oldest stale keys past its bound', () => {
    const h = new PeerSourceHealth({ maxStaleKeys: 2 });
    for (const key of ['k0', 'k1', 'k2']) h.failed('a', { kind: 'stale', key }, 0);
    expect(h.size.staleKeys).toBe(2);
    expect(h.offered('a', offer, 1).chunkKeys).toEqual(['k0', 'k3']);
  });

  it('a stale key cuts the peer run there, so a long prompt still fetches what is before it', () => {
    const h = new PeerSourceHealth();
    h.failed('a', { kind: 'stale', key: 'k2' }, 0);
    const choice = choosePeerPrefix(offer.chunkKeys, 1100, 0, 0, [h.offered('a', offer, 1)], () => h.usable('a', 1));
    expect(choice).toMatchObject({ source: 0, chunks: 2, until: 512 });
  });
});
