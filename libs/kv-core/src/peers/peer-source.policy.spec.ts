import { choosePeerPrefix, type OfferedChunks } from './peer-source.policy.js';

const K = ['k0', 'k1', 'k2', 'k3'];
const src = (...keys: string[]): OfferedChunks => ({ chunkKeys: keys });

describe(choosePeerPrefix.name, () => {
  it.each<[string, number, number, number, OfferedChunks[], ((i: number) => boolean) | undefined, ReturnType<typeof choosePeerPrefix>]>([
    ['no sources', 1100, 0, 0, [], undefined, null],
    [
      'one source with the whole prefix',
      1100,
      0,
      0,
      [src('k0', 'k1', 'k2', 'k3')],
      undefined,
      { source: 0, first: 0, chunks: 4, keys: ['k0', 'k1', 'k2', 'k3'], until: 1024 },
    ],
    [
      'the last row is always computed',
      1024,
      0,
      0,
      [src('k0', 'k1', 'k2', 'k3')],
      undefined,
      { source: 0, first: 0, chunks: 4, keys: ['k0', 'k1', 'k2', 'k3'], until: 1023 },
    ],
    [
      'a gap ends the run (KV is a prefix)',
      1100,
      0,
      0,
      [src('k0', 'k2', 'k3')],
      undefined,
      { source: 0, first: 0, chunks: 1, keys: ['k0'], until: 256 },
    ],
    [
      'starts at the chunk the device lacks',
      1100,
      300,
      0,
      [src('k1', 'k2')],
      undefined,
      { source: 0, first: 1, chunks: 2, keys: ['k1', 'k2'], until: 768 },
    ],
    ['a source without that chunk is useless', 1100, 300, 0, [src('k0', 'k2')], undefined, null],
    [
      'the longest run wins',
      1100,
      0,
      0,
      [src('k0'), src('k0', 'k1', 'k2')],
      undefined,
      { source: 1, first: 0, chunks: 3, keys: ['k0', 'k1', 'k2'], until: 768 },
    ],
    [
      'a tie goes to the earlier source',
      1100,
      0,
      0,
      [src('k0', 'k1'), src('k0', 'k1')],
      undefined,
      { source: 0, first: 0, chunks: 2, keys: ['k0', 'k1'], until: 512 },
    ],
    ['local tiers reaching as far win', 1100, 0, 512, [src('k0', 'k1')], undefined, null],
    [
      'a peer beyond the local tiers wins',
      1100,
      0,
      256,
      [src('k0', 'k1')],
      undefined,
      { source: 0, first: 0, chunks: 2, keys: ['k0', 'k1'], until: 512 },
    ],
    [
      'a failed source is skipped',
      1100,
      0,
      0,
      [src('k0', 'k1', 'k2'), src('k0')],
      (i) => i !== 0,
      { source: 1, first: 0, chunks: 1, keys: ['k0'], until: 256 },
    ],
    ['nothing past the device', 1100, 1024, 0, [src('k0', 'k1', 'k2', 'k3')], undefined, null],
  ])('%s', (_name, promptTokens, from, local, sources, usable, expected) => {
    expect(choosePeerPrefix(K, promptTokens, from, local, sources, usable)).toEqual(expected);
  });
});

describe(`${choosePeerPrefix.name} with partial chunks`, () => {
  // The prompt (1,100 tokens) ends in chunk 4; p3_j / p4_j name the first 16(j+1) tokens of chunks 3 / 4.
  const blocks = (c: number) => Array.from({ length: c === 4 ? 4 : 16 }, (_, j) => (j === 15 ? `k${c}` : `p${c}_${j}`));
  it.each<[string, number, number, OfferedChunks[], ReturnType<typeof choosePeerPrefix>]>([
    [
      'whole chunks, then the partial chunk the prompt ends in',
      0,
      0,
      [src('k0', 'k1', 'k2', 'k3', 'p4_2')],
      { source: 0, first: 0, chunks: 5, keys: ['k0', 'k1', 'k2', 'k3', 'p4_2'], until: 1072 },
    ],
    [
      'a partial of a chunk the prompt has since filled',
      0,
      0,
      [src('k0', 'k1', 'k2', 'p3_4')],
      { source: 0, first: 0, chunks: 4, keys: ['k0', 'k1', 'k2', 'p3_4'], until: 848 },
    ],
    [
      'the longest partial offered',
      0,
      0,
      [src('k0', 'k1', 'k2', 'k3', 'p4_0', 'p4_3')],
      { source: 0, first: 0, chunks: 5, keys: ['k0', 'k1', 'k2', 'k3', 'p4_3'], until: 1088 },
    ],
    ['only a partial, past what the device holds', 1024, 0, [src('p4_1')], { source: 0, first: 4, chunks: 1, keys: ['p4_1'], until: 1056 }],
    ['a partial not longer than the device reach is useless', 1056, 0, [src('p4_1')], null],
    ['a partial after a gap is useless', 0, 0, [src('k0', 'p3_4')], { source: 0, first: 0, chunks: 1, keys: ['k0'], until: 256 }],
  ])('%s', (_name, from, local, sources, expected) => {
    expect(choosePeerPrefix(K, 1100, from, local, sources, undefined, blocks)).toEqual(expected);
  });
});
