import { blockKeys } from '../keys/block-key.chain.js';
import { BLOCK_TOKENS, BLOCKS_PER_CHUNK, CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { KvBlockLedger, type DeviceChunkEvent } from './kv-block.ledger.js';
import type { StageRank } from './staged-chunk.set.js';

const toks = (n: number, seed = 1): number[] => Array.from({ length: n }, (_, i) => (i * 7 + seed) % 200);
const rank: StageRank = { priority: 0, dueMs: Infinity, stamp: 0, position: 0 };
/** The chunk key of chunk `c` of `tokens` under salt 't' (its last block's key). */
const chunkKey = (tokens: number[], c: number, salt = 't') => blockKeys('m', salt, tokens)[(c + 1) * BLOCKS_PER_CHUNK - 1]!;

/** Writes `tokens[0, upTo)` as a sequence and releases it: its full blocks stay cached. */
function leaveCached(sut: KvBlockLedger, tokens: number[], upTo: number): void {
  sut.open('earlier', 't');
  const ids = tokens.slice(0, upTo);
  sut.append([{ seqId: 'earlier', tokens: ids.length, ids }]);
  sut.commit(['earlier']);
  sut.release('earlier');
}

describe('KvBlockLedger staged chunks', () => {
  const prompt = toks(2 * CHUNK_TOKENS + 40);

  it.each([
    // name, device prefix left cached first (tokens), staged chunks, salt of the request, expected hit
    ['a staged first chunk is a hit', 0, [0], 't', CHUNK_TOKENS],
    ['two staged chunks in a row', 0, [0, 1], 't', 2 * CHUNK_TOKENS],
    ['named chunk 0 then staged chunk 1', CHUNK_TOKENS, [1], 't', 2 * CHUNK_TOKENS],
    ['a gap before the staged chunk: no hit past it', 0, [1], 't', 0],
    ['part of chunk 0 named, the rest from the staged copy', 5 * BLOCK_TOKENS, [0], 't', CHUNK_TOKENS],
    ['another tenant does not match', 0, [0], 'u', 0],
  ] as const)('%s', (_name, cachedTokens, stagedChunks, salt, hit) => {
    const sut = new KvBlockLedger('m', 64);
    if (cachedTokens > 0) leaveCached(sut, prompt, cachedTokens);
    for (const c of stagedChunks) expect(sut.stage(chunkKey(prompt, c), rank)).toHaveLength(BLOCKS_PER_CHUNK);
    expect(sut.cachedPrefix(salt, prompt)).toBe(hit);
    sut.open('req', salt);
    expect(sut.attachPrefix('req', prompt)).toBe(hit);
    sut.blocks.checkInvariant();
  });

  it.each([
    // name, chunk 0 staged too, the partial's blocks in chunk 1, prompt tokens, expected hit
    ['a partial chunk after a staged whole one', true, 5, 2 * CHUNK_TOKENS + 40, CHUNK_TOKENS + 5 * BLOCK_TOKENS],
    ['a partial chunk the prompt ends inside', true, 5, CHUNK_TOKENS + 5 * BLOCK_TOKENS + 1, CHUNK_TOKENS + 5 * BLOCK_TOKENS],
    ['a partial chunk past a gap', false, 5, 2 * CHUNK_TOKENS + 40, 0],
  ] as const)('partial staged chunks: %s', (_name, whole, blocksIn, n, hit) => {
    const sut = new KvBlockLedger('m', 64);
    if (whole) sut.stage(chunkKey(prompt, 0), rank);
    const partialKey = blockKeys('m', 't', prompt)[BLOCKS_PER_CHUNK + blocksIn - 1]!;
    sut.stage(partialKey, rank);
    sut.open('req', 't');
    expect(sut.attachPrefix('req', prompt.slice(0, n))).toBe(hit);
    if (hit > 0) expect(sut.blocks.counts()).toMatchObject({ staged: 0, active: hit / BLOCK_TOKENS, free: 64 - hit / BLOCK_TOKENS });
    sut.blocks.checkInvariant();
  });

  it('adopted blocks are named: the chunk is reported whole on the device and shared after release', () => {
    const events: DeviceChunkEvent[] = [];
    const sut = new KvBlockLedger('m', 64, (e) => events.push(e));
    const key = chunkKey(prompt, 0);
    const staged = sut.stage(key, rank)!;
    sut.open('req', 't');
    sut.attachPrefix('req', prompt);
    expect(sut.blockIds('req')).toEqual(staged);
    const keys = blockKeys('m', 't', prompt).slice(0, BLOCKS_PER_CHUNK);
    expect(events).toEqual([
      { kind: 'written', key, seqId: 'req', chunk: 0, superseded: keys.slice(0, -1), ids: prompt.slice(0, CHUNK_TOKENS), parentKey: null },
    ]);
    expect(sut.holdsChunk(key)).toBe(true);
    expect(sut.staging).toEqual({ staged: 1, adopted: 1, purged: 0, unstaged: 0 });
    sut.release('req');
    sut.open('next', 't');
    expect(sut.attachPrefix('next', prompt)).toBe(CHUNK_TOKENS);
    expect(sut.blockIds('next')).toEqual(staged);
    sut.blocks.checkInvariant();
  });

  it('the blocks of a staged chunk the device already held in part go free', () => {
    const sut = new KvBlockLedger('m', 64);
    leaveCached(sut, prompt, 5 * BLOCK_TOKENS);
    sut.stage(chunkKey(prompt, 0), rank);
    sut.open('req', 't');
    sut.attachPrefix('req', prompt);
    expect(sut.blocks.counts()).toMatchObject({ staged: 0, active: BLOCKS_PER_CHUNK, free: 64 - BLOCKS_PER_CHUNK });
    sut.blocks.checkInvariant();
  });

  it('a staged chunk still leaves the prompt a token to compute', () => {
    const sut = new KvBlockLedger('m', 64);
    const exact = toks(CHUNK_TOKENS);
    sut.stage(chunkKey(exact, 0), rank);
    expect(sut.cachedPrefix('t', exact)).toBe(0);
  });

  it.each([
    ['the chunk is named on the device already', true, 64, false],
    ['fewer free blocks than a chunk', false, BLOCKS_PER_CHUNK - 1, false],
    ['free room for it', false, BLOCKS_PER_CHUNK, true],
  ])('stage: %s', (_name, onDevice, capacity, ok) => {
    const sut = new KvBlockLedger('m', capacity);
    if (onDevice) leaveCached(sut, prompt, CHUNK_TOKENS);
    expect(sut.stage(chunkKey(prompt, 0), rank) !== null).toBe(ok);
  });

  it('prefixCost: taking a staged chunk takes it out of the reclaimable pool', () => {
    const sut = new KvBlockLedger('m', 64);
    sut.stage(chunkKey(prompt, 0), rank);
    expect(sut.blocks.numAvailable).toBe(64);
    // 19 blocks of prompt: 16 staged (leave the pool) + 3 new.
    expect(sut.prefixCost('t', prompt)).toEqual({ cachedTokens: CHUNK_TOKENS, blocks: Math.ceil(prompt.length / BLOCK_TOKENS) });
  });

  it('append reclaims staged chunks it needs and counts them purged; unstage frees the rest', () => {
    const sut = new KvBlockLedger('m', 2 * BLOCKS_PER_CHUNK);
    sut.stage(chunkKey(prompt, 0), rank);
    sut.stage(chunkKey(prompt, 1), { ...rank, stamp: 1 });
    const other = toks(CHUNK_TOKENS, 9);
    sut.open('other', 't');
    expect(sut.append([{ seqId: 'other', tokens: other.length, ids: other }])).not.toBeNull();
    expect(sut.staging.purged).toBe(1);
    expect(sut.blocks.stagedIds(chunkKey(prompt, 0))).toBeUndefined();
    expect(sut.unstage(chunkKey(prompt, 1))).toBe(true);
    expect(sut.staging).toMatchObject({ staged: 2, purged: 1, unstaged: 1 });
    sut.blocks.checkInvariant();
  });
});
