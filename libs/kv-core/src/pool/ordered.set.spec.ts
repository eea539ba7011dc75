import { OrderedSet } from './ordered.set.js';
import { seeded } from '../testing/seeded.random.js';

const byNumber = (a: number, b: number): number => a - b;

describe(OrderedSet.name, () => {
  const items = [10, 20, 30, 40];
  const queries: Array<[string, 'ceiling' | 'higher' | 'floor' | 'lower', number, number | undefined]> = [
    ['ceiling of a member is itself', 'ceiling', 20, 20],
    ['ceiling between members', 'ceiling', 21, 30],
    ['ceiling below all', 'ceiling', 1, 10],
    ['ceiling above all', 'ceiling', 41, undefined],
    ['higher of a member is the next', 'higher', 20, 30],
    ['higher of the last', 'higher', 40, undefined],
    ['floor of a member is itself', 'floor', 30, 30],
    ['floor between members', 'floor', 29, 20],
    ['floor below all', 'floor', 9, undefined],
    ['lower of a member is the previous', 'lower', 30, 20],
    ['lower of the first', 'lower', 10, undefined],
    ['lower above all', 'lower', 99, 40],
  ];
  it.each(queries)('%s', (_name, op, probe, expected) => {
    const sut = new OrderedSet(byNumber);
    for (const x of [30, 10, 40, 20]) sut.insert(x);
    expect(sut[op](probe)).toBe(expected);
    expect([...sut]).toEqual(items);
  });

  it('answers undefined on an empty set', () => {
    const sut = new OrderedSet(byNumber);
    expect([sut.first(), sut.last(), sut.ceiling(1), sut.floor(1)]).toEqual([undefined, undefined, undefined, undefined]);
    expect(sut.delete(1)).toBe(false);
  });

  it('rejects an item equal to one present, leaving the set unchanged', () => {
    const sut = new OrderedSet(byNumber);
    sut.insert(1);
    expect(() => sut.insert(1)).toThrow(/equal item/);
    expect(sut.size).toBe(1);
    sut.checkInvariant();
  });

  it('matches a sorted-array model through a seeded random workload', () => {
    const rand = seeded(7);
    const sut = new OrderedSet(byNumber);
    const model: number[] = [];
    for (let step = 0; step < 5000; step++) {
      const x = rand(500);
      const at = model.indexOf(x);
      if (rand(3) > 0 && at < 0) {
        sut.insert(x);
        model.push(x);
        model.sort(byNumber);
      } else {
        expect(sut.delete(x)).toBe(at >= 0);
        if (at >= 0) model.splice(at, 1);
      }
      const probe = rand(500);
      expect(sut.ceiling(probe)).toBe(model.find((y) => y >= probe));
      expect(sut.lower(probe)).toBe(model.filter((y) => y < probe).pop());
      expect(sut.has(probe)).toBe(model.includes(probe));
    }
    expect([...sut]).toEqual(model);
    expect(sut.size).toBe(model.length);
    expect(sut.first()).toBe(model[0]);
    expect(sut.last()).toBe(model[model.length - 1]);
    sut.checkInvariant();
  });

  it('stays shallow when fed sorted input (expected O(log n) depth)', () => {
    const sut = new OrderedSet(byNumber);
    for (let i = 0; i < 100_000; i++) sut.insert(i);
    // A plain BST would recurse 100 000 deep here and overflow the stack on delete.
    for (let i = 0; i < 100_000; i += 2) sut.delete(i);
    expect(sut.size).toBe(50_000);
    expect(sut.first()).toBe(1);
    sut.checkInvariant();
  });
});
