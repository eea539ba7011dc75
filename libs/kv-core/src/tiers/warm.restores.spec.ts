import { WARM_TTL_MS, WarmRestores, type After, type WarmReader } from './warm.restores.js';

function reader(from: number, until: number): WarmReader & { released: number } {
  const r = { from, until, released: 0, release: () => void r.released++, whenIdle: () => Promise.resolve() };
  return r;
}

/** A clock the test moves: timers fire when `advance` passes them. */
function clock(): { after: After; advance(ms: number): void; pending(): number } {
  let now = 0;
  const timers = new Set<{ at: number; fn: () => void }>();
  return {
    after: (ms, fn) => {
      const t = { at: now + ms, fn };
      timers.add(t);
      return () => void timers.delete(t);
    },
    advance(ms) {
      now += ms;
      for (const t of [...timers]) {
        if (t.at > now) continue;
        timers.delete(t);
        t.fn();
      }
    },
    pending: () => timers.size,
  };
}

describe(WarmRestores.name, () => {
  it.each<[string, [number, number], [number, number], 'used' | 'stale']>([
    ['the same positions: the pass takes the reader over', [256, 512], [256, 512], 'used'],
    ['the device gained a prefix meanwhile: stale, let go', [256, 512], [300, 512], 'stale'],
    ['the tiers lost a chunk meanwhile: stale, let go', [256, 768], [256, 512], 'stale'],
  ])('%s', (_name, [from, until], [passFrom, passUntil], outcome) => {
    const c = clock();
    const sut = new WarmRestores(c.after);
    const r = reader(from, until);
    sut.add('req', r);
    const got = sut.takeFor('req', passFrom, passUntil);
    expect(got).toBe(outcome === 'used' ? r : undefined);
    expect(r.released).toBe(outcome === 'used' ? 0 : 1);
    expect(sut.counters).toEqual({ started: 1, used: outcome === 'used' ? 1 : 0, stale: outcome === 'stale' ? 1 : 0, expired: 0 });
    expect([sut.has('req'), c.pending()]).toEqual([false, 0]);
  });

  it.each<[string, number, number]>([
    ['a reader nobody takes is let go after the TTL', WARM_TTL_MS, 1],
    ['but not before', WARM_TTL_MS - 1, 0],
  ])('%s', (_name, wait, expired) => {
    const c = clock();
    const sut = new WarmRestores(c.after);
    const r = reader(0, 256);
    sut.add('req', r);
    c.advance(wait);
    expect([r.released, sut.counters.expired, sut.has('req')]).toEqual([expired, expired, expired === 0]);
  });

  it('cool and coolAll let readers go and cancel their timers; a pass after that finds nothing', async () => {
    const c = clock();
    const sut = new WarmRestores(c.after);
    const [a, b, d] = [reader(0, 256), reader(0, 256), reader(0, 256)];
    sut.add('a', a);
    sut.add('b', b);
    sut.add('d', d);
    sut.cool('a');
    await sut.coolAll();
    expect([a.released, b.released, d.released, c.pending()]).toEqual([1, 1, 1, 0]);
    expect(sut.takeFor('b', 0, 256)).toBeUndefined();
  });
});
