import { SessionKvTiers } from './session-kv.tiers.js';

describe(SessionKvTiers.name, () => {
  it('places a served session in the first tier and moves the least recently served down, then out', () => {
    const sut = new SessionKvTiers([10, 10]);
    sut.touch(1, 6, 1);
    sut.touch(2, 6, 2); // tier 0 overflows: session 1 (older) moves down
    expect([sut.tierOf(1), sut.tierOf(2)]).toEqual([1, 0]);
    sut.touch(3, 6, 3); // 2 moves down, 1 overflows the last tier and is dropped
    expect([sut.tierOf(1), sut.tierOf(2), sut.tierOf(3)]).toEqual([null, 1, 0]);
    expect([sut.usedBytes(0), sut.usedBytes(1)]).toEqual([6, 6]);
  });

  it('serving a session again brings it back to the first tier, its grown size charged', () => {
    const sut = new SessionKvTiers([10, 10]);
    sut.touch(1, 4, 1);
    sut.touch(2, 4, 2);
    sut.touch(3, 4, 3);
    expect(sut.tierOf(1)).toBe(1);
    sut.touch(1, 5, 4);
    expect([sut.tierOf(1), sut.tierOf(3), sut.tierOf(2)]).toEqual([0, 0, 1]);
    expect([sut.usedBytes(0), sut.usedBytes(1)]).toEqual([9, 4]);
  });

  it.each([
    { name: 'larger than the first tier: goes to the next that holds it', caps: [4, 10], bytes: 6, tier: 1 },
    { name: 'larger than every tier: kept nowhere', caps: [4, 5], bytes: 6, tier: null },
  ])('$name', ({ caps, bytes, tier }) => {
    const sut = new SessionKvTiers(caps);
    sut.touch(7, bytes, 1);
    expect(sut.tierOf(7)).toBe(tier);
  });

  it('counts the bytes moved down into each tier, and moves down what a shrunk tier no longer holds', () => {
    const sut = new SessionKvTiers([10, 0]);
    sut.touch(1, 6, 1);
    sut.touch(2, 6, 2); // 1 has nowhere to go yet: dropped
    expect([sut.tierOf(1), sut.movedInto(1)]).toEqual([null, 0]);
    sut.resize(1, 20); // lent memory arrives
    sut.touch(3, 6, 3);
    expect([sut.tierOf(2), sut.movedInto(1)]).toEqual([1, 6]);
    sut.resize(0, 0); // the first tier taken back: 3 moves down beside 2
    expect([sut.tierOf(3), sut.usedBytes(1), sut.movedInto(1)]).toEqual([1, 12, 12]);
    expect(sut.capacities).toEqual([0, 20]);
    sut.remove(2);
    expect([sut.tierOf(2), sut.usedBytes(1)]).toEqual([null, 6]);
  });
});
