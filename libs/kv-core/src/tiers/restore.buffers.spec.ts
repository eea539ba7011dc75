import { RestoreBuffers, type BufferSource } from './restore.buffers.js';

/** A pool that counts what is out and remembers what came back. */
function pool(): BufferSource & { out: number; back: ArrayBuffer[] } {
  const p = {
    out: 0,
    back: [] as ArrayBuffer[],
    take: (bytes: number) => (p.out++, new ArrayBuffer(bytes)),
    give: (b: ArrayBuffer) => void (p.out--, p.back.push(b)),
  };
  return p;
}

type Step = ['scratch', number] | ['use' | 'done' | 'unused', number];

describe(RestoreBuffers.name, () => {
  // Each case: the steps (`scratch n` asks for n bytes and names the buffer by its order, `use`/`done`/`unused i`
  // act on buffer i), then which buffers a last `scratch 100` reuses (undefined: a new one).
  it.each<[string, Step[], number | undefined]>([
    [
      'a scratch buffer still in use is not handed out again',
      [
        ['scratch', 100],
        ['use', 0],
      ],
      undefined,
    ],
    [
      'one copied out is spare and handed out again',
      [
        ['scratch', 100],
        ['use', 0],
        ['done', 0],
      ],
      0,
    ],
    [
      'one holding two segments is spare only once both are out',
      [
        ['scratch', 100],
        ['use', 0],
        ['use', 0],
        ['done', 0],
      ],
      undefined,
    ],
    [
      'an unused one (its read failed) is spare at once',
      [
        ['scratch', 100],
        ['use', 0],
        ['unused', 0],
      ],
      0,
    ],
    [
      'a spare one too small is not handed out',
      [
        ['scratch', 50],
        ['unused', 0],
      ],
      undefined,
    ],
  ])('%s', (_name, steps, reused) => {
    const p = pool();
    const sut = new RestoreBuffers(p);
    const bufs: ArrayBuffer[] = [];
    for (const [op, n] of steps) {
      if (op === 'scratch') bufs.push(sut.scratch(n));
      else sut[op](bufs[n]!);
    }
    const last = sut.scratch(100);
    if (reused === undefined) expect(bufs).not.toContain(last);
    else expect(last).toBe(bufs[reused]);
  });

  it('gives every buffer it took back to the pool, layer payloads and scratch alike', () => {
    const p = pool();
    const sut = new RestoreBuffers(p);
    const payload = sut.take(64);
    const scratch = sut.scratch(32);
    sut.use(scratch);
    sut.giveBack();
    expect(p.out).toBe(0);
    expect(p.back).toEqual([payload, scratch]);
  });
});
