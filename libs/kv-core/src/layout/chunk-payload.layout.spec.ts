import { chunkElems, layerPieces, padChunkPayload, segmentElems } from './chunk-payload.layout.js';

const g = { layers: 3, rowElems: 2 };

describe(layerPieces.name, () => {
  it('sizes segments and chunks', () => {
    expect(segmentElems(g)).toBe(2 * 256 * 2);
    expect(chunkElems(g)).toBe(3 * 2 * 256 * 2);
  });

  it.each([
    [
      'one whole chunk, layer 0',
      0,
      0,
      256,
      [
        { chunk: 0, src: 0, dst: 0, len: 512 },
        { chunk: 0, src: 512, dst: 512, len: 512 },
      ],
    ],
    [
      'a chunk cut at both ends, layer 2',
      2,
      16,
      48,
      [
        { chunk: 0, src: 2 * 1024 + 32, dst: 0, len: 64 },
        { chunk: 0, src: 2 * 1024 + 512 + 32, dst: 64, len: 64 },
      ],
    ],
    [
      'across a chunk boundary',
      1,
      240,
      272,
      [
        { chunk: 0, src: 1024 + 480, dst: 0, len: 32 },
        { chunk: 0, src: 1024 + 512 + 480, dst: 64, len: 32 },
        { chunk: 1, src: 1024, dst: 32, len: 32 },
        { chunk: 1, src: 1024 + 512, dst: 96, len: 32 },
      ],
    ],
    ['an empty range', 0, 100, 100, []],
  ])('%s', (_name, layer, from, until, expected) => {
    expect(layerPieces(g, layer, from, until)).toEqual(expected);
  });

  it('covers the layer payload exactly once, from the right chunk rows', () => {
    const from = 100;
    const until = 700;
    const chunks = [0, 1, 2].map((c) => Float32Array.from({ length: chunkElems(g) }, (_, i) => c * 1e6 + i));
    const out = new Float32Array(2 * (until - from) * g.rowElems).fill(NaN);
    for (const p of layerPieces(g, 1, from, until)) out.set(chunks[p.chunk]!.subarray(p.src, p.src + p.len), p.dst);
    // K row of position t, element e, layer 1: chunk ⌊t/256⌋, offset 1·seg + (t mod 256)·row + e; V one half-segment further.
    for (let t = from; t < until; t++) {
      for (let e = 0; e < g.rowElems; e++) {
        const c = Math.floor(t / 256);
        const k = c * 1e6 + segmentElems(g) + (t % 256) * g.rowElems + e;
        expect(out[(t - from) * g.rowElems + e]).toBe(k);
        expect(out[(until - from + t - from) * g.rowElems + e]).toBe(k + 256 * g.rowElems);
      }
    }
  });

  it.each([
    ['layer past the last', 3, 0, 1],
    ['negative start', 0, -1, 5],
    ['reversed range', 0, 5, 4],
  ])('rejects %s', (_n, layer, from, until) => {
    expect(() => layerPieces(g, layer, from, until)).toThrow(RangeError);
  });
});

describe(padChunkPayload.name, () => {
  it("puts each layer's K and V rows where the whole chunk keeps them, and zeroes the rest", () => {
    const tokens = 3;
    const compact = Float32Array.from({ length: g.layers * 2 * tokens * g.rowElems }, (_, i) => i + 1);
    const sut = padChunkPayload(g, compact, tokens);
    expect(sut.length).toBe(chunkElems(g));
    for (const [layer, kv] of [
      [0, 0],
      [0, 1],
      [2, 1],
    ] as const) {
      const at = layer * segmentElems(g) + kv * 256 * g.rowElems;
      const from = (layer * 2 + kv) * tokens * g.rowElems;
      expect([...sut.subarray(at, at + tokens * g.rowElems)]).toEqual([...compact.subarray(from, from + tokens * g.rowElems)]);
      expect(sut.subarray(at + tokens * g.rowElems, at + 256 * g.rowElems).every((x) => x === 0)).toBe(true);
    }
  });

  it.each([[3], [256]])('writes %p tokens into a given buffer of any contents, padding zeroed, as a fresh payload', (tokens) => {
    const compact = Float32Array.from({ length: g.layers * 2 * tokens * g.rowElems }, (_, i) => i + 1);
    const into = new Float32Array(chunkElems(g)).fill(NaN);
    expect(padChunkPayload(g, compact, tokens, into)).toBe(into);
    expect([...into]).toEqual([...padChunkPayload(g, compact.slice(), tokens)]);
    expect(() => padChunkPayload(g, compact, tokens, new Float32Array(chunkElems(g) - 1))).toThrow(RangeError);
  });

  it('returns a whole chunk as it is', () => {
    const whole = new Float32Array(chunkElems(g)).fill(1);
    expect(padChunkPayload(g, whole, 256)).toBe(whole);
  });

  it.each([[0], [257], [1.5]])('refuses %p tokens', (tokens) => {
    expect(() => padChunkPayload(g, new Float32Array(0), tokens)).toThrow(RangeError);
  });

  it('refuses a payload of the wrong size', () => {
    expect(() => padChunkPayload(g, new Float32Array(5), 2)).toThrow(/2 tokens need 24/);
  });
});
