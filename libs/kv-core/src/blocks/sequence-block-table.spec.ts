import { DeviceBlockManager } from './device-block.manager.js';
import { SequenceBlockTable } from './sequence-block-table.js';

describe(SequenceBlockTable.name, () => {
  it.each([
    ['empty, one token', 0, 1, 1],
    ['empty, a full block', 0, 16, 1],
    ['empty, one over', 0, 17, 2],
    ['room left in last block', 5, 11, 0],
    ['last block exactly full', 16, 1, 1],
    ['fills the partial block and two more', 10, 6 + 32, 2],
    ['no new tokens', 10, 0, 0],
  ])('%s: %i tokens + %i → %i new blocks', (_name, have, add, need) => {
    const blocks = Array.from({ length: Math.ceil(have / 16) }, (_, i) => 100 + i);
    const sut = new SequenceBlockTable(blocks, have);
    expect(sut.blocksNeeded(add)).toBe(need);
  });

  it('maps every appended token to its slot, across blocks', () => {
    const sut = new SequenceBlockTable([4], 14, 16);
    const plan = sut.append(4, [9]);
    expect(Array.from(plan.slots)).toEqual([4 * 16 + 14, 4 * 16 + 15, 9 * 16, 9 * 16 + 1]);
    expect(sut.blocks).toEqual([4, 9]);
    expect(sut.numTokens).toBe(18);
    expect(sut.slotOf(17)).toBe(9 * 16 + 1);
  });

  it.each([
    ['too few blocks', 30, [1]],
    ['too many blocks', 2, [1]],
  ])('rejects append with %s', (_name, add, blocks) => {
    const sut = new SequenceBlockTable([0], 10);
    expect(() => sut.append(add, blocks)).toThrow(RangeError);
    expect(sut.numTokens).toBe(10);
  });

  it('rejects a block table that does not match the token count', () => {
    expect(() => new SequenceBlockTable([1, 2], 16)).toThrow(RangeError);
  });

  it('rejects slotOf past the last token', () => {
    expect(() => new SequenceBlockTable([0], 3).slotOf(3)).toThrow(RangeError);
  });

  describe('appendFrom', () => {
    it('allocates exactly what it needs', () => {
      const allocator = new DeviceBlockManager(4);
      const sut = new SequenceBlockTable();
      expect(sut.appendFrom(allocator, 20)?.newBlocks).toEqual([0, 1]);
      expect(sut.appendFrom(allocator, 12)?.newBlocks).toEqual([]);
      expect(allocator.numFree).toBe(2);
    });

    it('returns null and changes nothing when the allocator is full', () => {
      const allocator = new DeviceBlockManager(1);
      const sut = new SequenceBlockTable();
      expect(sut.appendFrom(allocator, 17)).toBeNull();
      expect(sut.numTokens).toBe(0);
      expect(allocator.numFree).toBe(1);
    });
  });

  it('shares a whole-block prefix and releases it back to the allocator', () => {
    const allocator = new DeviceBlockManager(4);
    const owner = new SequenceBlockTable();
    owner.appendFrom(allocator, 32);
    allocator.acquire(owner.blocks);
    const sut = new SequenceBlockTable(owner.blocks, 32);
    sut.appendFrom(allocator, 1);
    expect(sut.blocks).toEqual([0, 1, 2]);
    allocator.release(owner.clear());
    expect(allocator.numFree).toBe(1);
    allocator.release(sut.clear());
    expect(allocator.numFree).toBe(4);
  });
});
