import { blockKeys, chunkKeys } from '../keys/index.js';
import { KvDirectory } from '../directory/kv.directory.js';
import { indexerQuery } from './indexer.query.js';
import { isTilingBlockSize, tierOfMedium, vllmBlockHash, vllmChunkBlocks } from './vllm-block.mapping.js';
import { VllmBlockFolder } from './vllm-block.folder.js';

const tokens = (n: number, from = 0) => Array.from({ length: n }, (_, i) => (from + i * 7) % 1000);
const M = 'm';
const SALT = 'default';

describe('vLLM block mapping', () => {
  it.each<[string, string, bigint]>([
    ['the last 8 bytes, big-endian', '000102030405060708090a0b0c0d0e0f', 0x08090a0b0c0d0e0fn],
    ['the top bit set stays unsigned', '00000000000000000000000000000000'.slice(0, 16) + 'ffffffffffffffff', 0xffffffffffffffffn],
  ])('vllmBlockHash: %s', (_n, key, hash) => {
    expect(vllmBlockHash(key)).toBe(hash);
  });

  it.each<[string | null | undefined, string | null]>([
    ['GPU', 'device'],
    [null, 'device'],
    ['NPU', 'device'],
    ['CPU', 'host'],
    ['CPU_PINNED', 'host'],
    ['DISK', 'ssd'],
    ['STORAGE', 'ssd'],
    ['TAPE', null],
  ])('medium %s → tier %s', (medium, tier) => {
    expect(tierOfMedium(medium)).toBe(tier);
  });

  it.each<[number, boolean]>([
    [16, true],
    [32, true],
    [256, true],
    [8, false],
    [48, false],
    [512, false],
    [16.5, false],
  ])('block size %d tiles a chunk: %s', (b, ok) => {
    expect(isTilingBlockSize(b)).toBe(ok);
  });

  it('a whole chunk is 16 blocks whose last hash is the chunk key; a partial chunk has as many blocks as it has whole ones', () => {
    const t = tokens(256 + 48);
    const keys = blockKeys(M, SALT, t);
    const [c0, c1] = [keys.slice(0, 16), keys.slice(16, 19)];
    const whole = vllmChunkBlocks(c0, null, t.slice(0, 256))!;
    expect(whole.blockHashes).toHaveLength(16);
    expect(whole.blockHashes[15]).toBe(vllmBlockHash(chunkKeys(M, SALT, t)[0]!));
    expect(whole.parentBlockHash).toBeNull();
    const partial = vllmChunkBlocks(c1, c0[15]!, t.slice(256, 304))!;
    expect(partial.blockHashes).toHaveLength(3);
    expect(partial.parentBlockHash).toBe(whole.blockHashes[15]);
    expect(vllmChunkBlocks(c1, c0[15]!, t.slice(256, 300))).toBeNull();
  });
});

describe(VllmBlockFolder.name, () => {
  const hashes = (n: number, from = 1) => Array.from({ length: n }, (_, i) => String(from + i));

  it('gives each external block our key: chunk keys at chunk ends, block keys inside, across events chained by parent', () => {
    const sut = new VllmBlockFolder(M, SALT);
    const t = tokens(256 + 32);
    const first = sut.stored({ blockHashes: hashes(10), parentBlockHash: null, tokenIds: t.slice(0, 160), blockSize: 16 });
    const rest = sut.stored({ blockHashes: hashes(8, 11), parentBlockHash: '10', tokenIds: t.slice(160), blockSize: 16 });
    expect(first.ok && rest.ok).toBe(true);
    const ours = blockKeys(M, SALT, t);
    expect([...(first.ok ? first.keys : []), ...(rest.ok ? rest.keys : [])]).toEqual(ours);
    expect(ours[15]).toBe(chunkKeys(M, SALT, t)[0]);
  });

  it('32-token blocks land on every other 16-token key', () => {
    const sut = new VllmBlockFolder(M, SALT);
    const t = tokens(256);
    const r = sut.stored({ blockHashes: hashes(8), parentBlockHash: null, tokenIds: t, blockSize: 32 });
    expect(r.ok && r.keys).toEqual(blockKeys(M, SALT, t).filter((_, i) => i % 2 === 1));
  });

  it.each<[string, object, string]>([
    ['a parent never seen', { parentBlockHash: '999' }, 'unknown_parent'],
    ['a block size that does not tile a chunk', { blockSize: 24, tokenIds: tokens(24) }, 'bad_block_size'],
    ['tokens that are not whole blocks', { tokenIds: tokens(15) }, 'bad_shape'],
  ])('refuses %s', (_n, change, reason) => {
    const sut = new VllmBlockFolder(M, SALT);
    expect(sut.stored({ blockHashes: ['1'], parentBlockHash: null, tokenIds: tokens(16), blockSize: 16, ...change })).toEqual({
      ok: false,
      reason,
    });
  });

  it('removals name our keys; a cleared engine forgets every parent; the state is bounded', () => {
    const sut = new VllmBlockFolder(M, SALT, 4);
    const r = sut.stored({ blockHashes: hashes(6), parentBlockHash: null, tokenIds: tokens(96), blockSize: 16 });
    expect(sut.size).toBe(4);
    expect(sut.removed(['6', '1'])).toEqual([r.ok ? r.keys[5] : '']);
    sut.cleared();
    expect(sut.stored({ blockHashes: ['7'], parentBlockHash: '6', tokenIds: tokens(16), blockSize: 16 })).toEqual({
      ok: false,
      reason: 'unknown_parent',
    });
  });
});

describe('indexerQuery', () => {
  const t = tokens(2 * 256 + 64);
  const keys = blockKeys(M, SALT, t);
  const chunk = (c: number) => keys[c * 16 + 15]!;

  it.each<[string, (d: KvDirectory) => void, Record<string, { longestMatched: number; tiers: Record<string, number> }>]>([
    ['nothing held', () => undefined, {}],
    [
      'two whole chunks on the device and host, then a partial on the host',
      (d) =>
        d.apply('n1', [
          { kind: 'stored', tier: 'device', keys: [chunk(0), chunk(1)] },
          { kind: 'stored', tier: 'host', keys: [chunk(0), keys[2 * 16 + 2]!] },
        ]),
      { n1: { longestMatched: 512 + 48, tiers: { device: 512, host: 256 + 48, ssd: 0 } } },
    ],
    [
      'a prefix stops at the first missing chunk even if later ones are held',
      (d) => d.apply('n1', [{ kind: 'stored', tier: 'ssd', keys: [chunk(0), keys[2 * 16 + 3]!] }]),
      { n1: { longestMatched: 256, tiers: { device: 0, host: 0, ssd: 256 } } },
    ],
    [
      'an engine holding single blocks (external) counts its longest block of a chunk',
      (d) => d.apply('ext', [{ kind: 'stored', tier: 'device', keys: keys.slice(0, 5) }]),
      { ext: { longestMatched: 80, tiers: { device: 80, host: 0, ssd: 0 } } },
    ],
    [
      'several engines side by side',
      (d) => {
        d.apply('a', [{ kind: 'stored', tier: 'host', keys: [chunk(0), chunk(1)] }]);
        d.apply('b', [{ kind: 'stored', tier: 'device', keys: [chunk(0)] }]);
      },
      {
        a: { longestMatched: 512, tiers: { device: 0, host: 512, ssd: 0 } },
        b: { longestMatched: 256, tiers: { device: 256, host: 0, ssd: 0 } },
      },
    ],
  ])('%s', (_n, setup, want) => {
    const d = new KvDirectory(1000);
    setup(d);
    expect(Object.fromEntries(indexerQuery((k) => d.holdings(k), keys))).toEqual(want);
  });
});
