import { choosePeerPrefix, type OfferedChunks } from './peer-source.policy.js';

const K = ['k0', 'k1', 'k2', 'k3'];
const src = (...keys: string[]): OfferedChunks => ({ chunkKeys: keys });

describe(choosePeerPrefix.name, () => {
  it.each<[string, number, number, number, OfferedChunks[], ((i: number) => boolean) | undefined, ReturnType<typeof choosePeerPrefix>]>([
    ['no sources', 1100, 0, 0, [], undefined, null],
    ['one source with the whole prefix', 1100, 0, 0, [src('k0', 'k1', 'k2', 'k3')], undefined, { source: 0, first: 0, chunks: 4, until: 1024 }],
    ['the last row is always computed', 1024, 0, 0, [src('k0', 'k1', 'k2', 'k3')], undefined, { source: 0, first: 0, chunks: 4, until: 1023 }],
    ['a gap ends the run (KV is a prefix)', 1100, 0, 0, [src('k0', 'k2', 'k3')], undefined, { source: 0, first: 0, chunks: 1, until: 256 }],
    ['starts at the chunk the device lacks', 1100, 300, 0, [src('k1', 'k2')], undefined, { source: 0, first: 1, chunks: 2, until: 768 }],
    ['a source without that chunk is useless', 1100, 300, 0, [src('k0', 'k2')], undefined, null],
    ['the longest run wins', 1100, 0, 0, [src('k0'), src('k0', 'k1', 'k2')], undefined, { source: 1, first: 0, chunks: 3, until: 768 }],
    ['a tie goes to the earlier source', 1100, 0, 0, [src('k0', 'k1'), src('k0', 'k1')], undefined, { source: 0, first: 0, chunks: 2, until: 512 }],
    ['local tiers reaching as far win', 1100, 0, 512, [src('k0', 'k1')], undefined, null],
    ['a peer beyond the local tiers wins', 1100, 0, 256, [src('k0', 'k1')], undefined, { source: 0, first: 0, chunks: 2, until: 512 }],
    ['a failed source is skipped', 1100, 0, 0, [src('k0', 'k1', 'k2'), src('k0')], (i) => i !== 0, { source: 1, first: 0, chunks: 1, until: 256 }],
    ['nothing past the device', 1100, 1024, 0, [src('k0', 'k1', 'k2', 'k3')], undefined, null],
  ])('%s', (_name, promptTokens, from, local, sources, usable, expected) => {
    expect(choosePeerPrefix(K, promptTokens, from, local, sources, usable)).toEqual(expected);
  });
});
