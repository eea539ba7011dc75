import { compareEvictionOrder, PurgeQueue, type EvictionKey } from './eviction.order.js';

interface Item extends EvictionKey {
  name: string;
  bytes: number;
}

const item = (name: string, stamp: number, layer: number, position: number, bytes = 1): Item => ({ name, stamp, layer, position, bytes });

describe(compareEvictionOrder.name, () => {
  it.each([
    ['older request first, whatever its layer', item('a', 1, 0, 0), item('b', 2, 9, 9)],
    ['same request: later layer first', item('a', 5, 3, 0), item('b', 5, 2, 7)],
    ['same request and layer: later chunk first', item('a', 5, 3, 4), item('b', 5, 3, 1)],
  ])('%s', (_name, first, second) => {
    expect(compareEvictionOrder(first, second)).toBeLessThan(0);
    expect(compareEvictionOrder(second, first)).toBeGreaterThan(0);
  });

  it('orders one request layer by layer from the top, chunks from the back', () => {
    const items = [0, 1].flatMap((layer) => [0, 1, 2].map((pos) => item(`L${layer}C${pos}`, 7, layer, pos)));
    expect(items.sort(compareEvictionOrder).map((i) => i.name)).toEqual(['L1C2', 'L1C1', 'L1C0', 'L0C2', 'L0C1', 'L0C0']);
  });
});

describe(PurgeQueue.name, () => {
  function queue(): [PurgeQueue<Item>, Item[]] {
    const sut = new PurgeQueue<Item>();
    const items = [item('new-L0', 20, 0, 0, 10), item('old-L0', 10, 0, 0, 10), item('old-L1', 10, 1, 0, 10), item('new-L1', 20, 1, 0, 10)];
    items.forEach((i) => sut.add(i));
    return [sut, items];
  }

  it.each([
    ['nothing needed', 0, []],
    ['one item covers it', 5, ['old-L1']],
    ['exactly two items', 20, ['old-L1', 'old-L0']],
    ['spills into the next request, later layer first', 25, ['old-L1', 'old-L0', 'new-L1']],
    ['more than everything: all, in order', 1000, ['old-L1', 'old-L0', 'new-L1', 'new-L0']],
  ])('choose: %s', (_name, bytes, expected) => {
    const [sut] = queue();
    expect(sut.choose(bytes).map((i) => i.name)).toEqual(expected);
    expect(sut.size).toBe(4);
  });

  it('take removes what it returns; remove drops a running request', () => {
    const [sut, items] = queue();
    expect(sut.remove(items[2]!)).toBe(true);
    expect(sut.remove(items[2]!)).toBe(false);
    expect(sut.take(10).map((i) => i.name)).toEqual(['old-L0']);
    expect(sut.choose(1000).map((i) => i.name)).toEqual(['new-L1', 'new-L0']);
    expect(sut.size).toBe(2);
  });

  it('keeps equal keys in insertion order', () => {
    const sut = new PurgeQueue<Item>();
    ['x', 'y', 'z'].forEach((n) => sut.add(item(n, 1, 0, 0)));
    expect(sut.choose(3).map((i) => i.name)).toEqual(['x', 'y', 'z']);
  });

  it('rejects a duplicate and a non-finite stamp', () => {
    const sut = new PurgeQueue<Item>();
    const a = item('a', 1, 0, 0);
    sut.add(a);
    expect(() => sut.add(a)).toThrow(/already queued/);
    expect(() => sut.add(item('b', NaN, 0, 0))).toThrow(RangeError);
    expect(sut.size).toBe(1);
  });
});
