import { DeviceBlockManager } from '../blocks/device-block.manager.js';

/**
 * Block-major layout makes an elastic resize touch only the blocks that move (SwiftCache §3.4):
 * growing or shrinking by one unit must cost the same whether the cache holds a thousand blocks
 * or a million. Best of several trials, so a loaded machine shows up as noise, not as a trend.
 */
function resizeCost(capacity: number, unitBlocks: number): number {
  const sut = new DeviceBlockManager(capacity);
  const cached = sut.allocate(Math.min(capacity, 64))!;
  cached.forEach((id, i) => sut.commit(id, `k${i}`));
  sut.release(cached);
  let best = Infinity;
  for (let trial = 0; trial < 5; trial++) {
    const t0 = performance.now();
    for (let i = 0; i < 500; i++) {
      sut.grow(unitBlocks);
      if (!sut.shrink(unitBlocks)) throw new Error('shrink refused');
    }
    best = Math.min(best, performance.now() - t0);
  }
  sut.checkInvariant();
  return best;
}

describe('elastic resize cost', () => {
  it('is flat as the cache grows by three orders of magnitude', () => {
    resizeCost(1000, 3); // warm the JIT
    const costs = [1_000, 10_000, 100_000, 1_000_000].map((c) => resizeCost(c, 3));
    const ratio = Math.max(...costs) / Math.min(...costs);
    expect(ratio).toBeLessThan(5);
  });
});
