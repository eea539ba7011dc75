import { EventQueue } from '../core/event.queue.js';
import { TwinTiers, type TierChange } from './twin-tiers.js';

const K0 = '0'.repeat(32);
const K1 = '1'.repeat(32);
const link = { dispatchMs: 0.01, bytesPerMs: 1e6 };

describe('TwinTiers.write', () => {
  it('writes a chunk named twice in one export once (two sequences sharing a prefix chunk)', () => {
    const events = new EventQueue();
    const changes: TierChange[] = [];
    const tiers = new TwinTiers(
      {
        layers: 4,
        segBytes: 8192,
        host: [{ bytes: 1 << 24, bandwidth: 1 }],
        ssd: [{ bytes: 1 << 24, bandwidth: 1 }],
        ssdTtlMs: 60_000,
        hostWrite: link,
        ssdWrite: link,
      },
      events,
      (c) => changes.push(c),
    );
    tiers.write([
      { key: K0, position: 0 },
      { key: K0, position: 0 },
      { key: K1, position: 1 },
    ]);
    expect(() => events.run()).not.toThrow();
    expect(tiers.holdsOnHost(K0)).toBe(true);
    expect(tiers.holdsOnHost(K1)).toBe(true);
    expect(tiers.counters.writtenBytes.mem).toBe(2 * 4 * 8192);
    expect(
      changes
        .filter((c) => c.tier === 'mem' && c.kind === 'stored')
        .flatMap((c) => c.keys)
        .sort(),
    ).toEqual([K0, K1]);
  });
});
