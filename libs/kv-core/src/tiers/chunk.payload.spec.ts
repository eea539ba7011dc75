import { PayloadUse } from './chunk.payload.js';

describe(PayloadUse.name, () => {
  it.each<[string, number, number, number]>([
    ['the host write alone: released when it drops', 0, 1, 1],
    ['with two SSD writes: not while one still reads', 2, 2, 0],
    ['with two SSD writes: released when the last drops', 2, 3, 1],
    ['dropped past zero: released once only', 0, 2, 1],
  ])('%s', (_name, adds, drops, released) => {
    let n = 0;
    const sut = new PayloadUse({ key: 'k', position: 0, payload: new Float32Array(1), release: () => n++ });
    for (let i = 0; i < adds; i++) sut.add();
    for (let i = 0; i < drops; i++) sut.drop();
    expect(n).toBe(released);
  });
});
