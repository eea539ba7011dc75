import {
  advisoryDueMs,
  compareEvictionOrder,
  comparePrefetchPurge,
  mostUrgent,
  PurgeQueue,
  type EvictionKey,
  type PrefetchUrgency,
} from './eviction.order.js';

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

describe(advisoryDueMs.name, () => {
  it.each([
    ['an expected arrival is the due time', { expectedArrivalMs: 5000, ordered: false, receivedMs: 100 }, 5000],
    ['an expected arrival wins over order', { expectedArrivalMs: 5000, ordered: true, receivedMs: 100 }, 5000],
    ['ordered without arrival: due in the order received', { expectedArrivalMs: 0, ordered: true, receivedMs: 100 }, 100],
    ['neither: due at an unknown time, after every other', { expectedArrivalMs: 0, ordered: false, receivedMs: 100 }, Infinity],
  ])('%s', (_name, a, due) => {
    expect(advisoryDueMs(a)).toBe(due);
  });

  it('the most urgent of two wants: higher priority, sooner due', () => {
    expect(mostUrgent({ priority: 1, dueMs: 900 }, { priority: 3, dueMs: Infinity })).toEqual({ priority: 3, dueMs: 900 });
  });
});

describe(comparePrefetchPurge.name, () => {
  type Pf = Item & PrefetchUrgency;
  const pf = (name: string, priority: number, dueMs: number, stamp = 1, layer = 0): Pf => ({
    ...item(name, stamp, layer, 0),
    priority,
    dueMs,
  });
  it.each([
    ['lower priority first, whatever its timing', pf('a', 0, 10), pf('b', 1, Infinity)],
    ['same priority: the request due last first', pf('a', 1, 900), pf('b', 1, 100)],
    ['unknown timing before a known one', pf('a', 1, Infinity), pf('b', 1, 5000)],
    ['same priority and due: the LRU rule (later layer first)', pf('a', 1, 100, 5, 3), pf('b', 1, 100, 5, 1)],
    ['same priority and due: least recently used first', pf('a', 1, Infinity, 1, 0), pf('b', 1, Infinity, 2, 9)],
  ])('%s', (_name, first, second) => {
    expect(comparePrefetchPurge(first, second)).toBeLessThan(0);
    expect(comparePrefetchPurge(second, first)).toBeGreaterThan(0);
  });

  it('drives a PurgeQueue: ordered agents keep the next hop, the chat advisory goes first', () => {
    const sut = new PurgeQueue<Pf>(comparePrefetchPurge);
    // Two ordered agent hops (received at 100 and 200) and a chat advisory with no timing, all priority 1.
    [pf('hop2-L0', 1, 200), pf('hop1-L0', 1, 100), pf('chat-L0', 1, Infinity), pf('hop1-L1', 1, 100, 1, 1)].forEach((i) => sut.add(i));
    expect(sut.take(1000).map((i) => i.name)).toEqual(['chat-L0', 'hop2-L0', 'hop1-L1', 'hop1-L0']);
  });
});
