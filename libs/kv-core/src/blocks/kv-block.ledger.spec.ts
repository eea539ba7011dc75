import { BlockKeyChain, blockKeys } from '../keys/block-key.chain.js';
import { BLOCK_TOKENS, CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { KvBlockLedger, type DeviceChunkEvent } from './kv-block.ledger.js';

const toks = (n: number, seed = 1): number[] => Array.from({ length: n }, (_, i) => (i * 7 + seed) % 200);

/** Writes `tokens` into a fresh sharing sequence, commits and (optionally) releases it. */
function run(sut: KvBlockLedger, seqId: string, tokens: number[], salt = 't', release = true): number {
  sut.open(seqId, salt);
  const hit = sut.attachPrefix(seqId, tokens);
  const rest = tokens.slice(hit);
  expect(sut.append([{ seqId, tokens: rest.length, ids: rest }])).not.toBeNull();
  sut.commit([seqId]);
  if (release) sut.release(seqId);
  return hit;
}

describe(KvBlockLedger.name, () => {
  describe('chunk events', () => {
    it.each([
      // tokens written and committed, expected partial: [chunk, tokens] or none
      ['inside the first chunk', 100, [0, 96]],
      ['past one whole chunk', CHUNK_TOKENS + 40, [1, 32]],
      ['less than a block past a whole chunk', CHUNK_TOKENS + 10, null],
      ['exactly whole chunks', 2 * CHUNK_TOKENS, null],
      ['less than a block', 10, null],
    ] as const)('a released sequence reports its partial last chunk: %s', (_name, n, expected) => {
      const events: DeviceChunkEvent[] = [];
      const sut = new KvBlockLedger('m', 64, (e) => events.push(e));
      const tokens = toks(n);
      run(sut, 'a', tokens);
      const keys = blockKeys('m', 't', tokens);
      const partials = events.filter((e) => e.kind === 'partial');
      if (!expected) return expect(partials).toEqual([]);
      const [chunk, covered] = expected;
      const first = chunk * (CHUNK_TOKENS / BLOCK_TOKENS);
      const last = first + covered / BLOCK_TOKENS - 1;
      // The content names the chunk's tokens and the chunk before it (vLLM-format events describe blocks by them).
      const ids = tokens.slice(chunk * CHUNK_TOKENS, chunk * CHUNK_TOKENS + covered);
      expect(partials).toEqual([
        {
          kind: 'partial',
          key: keys[last],
          seqId: 'a',
          chunk,
          tokens: covered,
          superseded: keys.slice(first, last),
          ids,
          parentKey: chunk === 0 ? null : keys[first - 1],
        },
      ]);
    });

    it('a whole chunk supersedes the keys of its shorter prefixes', () => {
      const events: DeviceChunkEvent[] = [];
      const sut = new KvBlockLedger('m', 64, (e) => events.push(e));
      const tokens = toks(CHUNK_TOKENS + 20);
      run(sut, 'a', tokens);
      const keys = blockKeys('m', 't', tokens);
      expect(events.filter((e) => e.kind === 'written')).toEqual([
        {
          kind: 'written',
          key: keys[15],
          seqId: 'a',
          chunk: 0,
          superseded: keys.slice(0, 15),
          ids: tokens.slice(0, CHUNK_TOKENS),
          parentKey: null,
        },
      ]);
    });

    it('reports only committed blocks: KV still being computed is never named', () => {
      const events: DeviceChunkEvent[] = [];
      const sut = new KvBlockLedger('m', 64, (e) => events.push(e));
      sut.open('a', 't');
      const tokens = toks(40);
      sut.append([{ seqId: 'a', tokens: 40, ids: tokens }]);
      sut.release('a');
      expect(events).toEqual([]);
    });

    it('a sequence that does not share reports nothing', () => {
      const events: DeviceChunkEvent[] = [];
      const sut = new KvBlockLedger('m', 64, (e) => events.push(e));
      sut.open('plain');
      sut.append([{ seqId: 'plain', tokens: 40 }]);
      sut.commit(['plain']);
      sut.release('plain');
      expect(events).toEqual([]);
    });
  });

  describe('prefix hits', () => {
    it.each([
      ['same prompt again: all whole blocks but the one holding the last token', toks(40), toks(40), 32],
      ['a prompt that is a whole number of blocks keeps its last block to compute', toks(32), toks(32), 16],
      ['a longer prompt with the same head', toks(40), toks(100), 32],
      ['a prompt that extends a finished one', toks(100), toks(40), 32],
      ['a different first token', toks(40), toks(40, 2), 0],
      ['a prompt shorter than a block', toks(40), toks(10), 0],
      ['diverging in the second block', toks(64), [...toks(20), ...toks(44, 3)], 16],
    ])('%s', (_name, first, second, expected) => {
      const sut = new KvBlockLedger('m', 64);
      run(sut, 'a', first);
      expect(sut.cachedPrefix('t', second)).toBe(expected);
      expect(run(sut, 'b', second)).toBe(expected);
      sut.blocks.checkInvariant();
    });

    it('does not share across tenant salts or with sequences that do not share', () => {
      const sut = new KvBlockLedger('m', 64);
      run(sut, 'a', toks(48), 'tenant-a');
      expect(sut.cachedPrefix('tenant-b', toks(48))).toBe(0);
      sut.open('plain');
      sut.append([{ seqId: 'plain', tokens: 48 }]);
      sut.commit(['plain']);
      sut.release('plain');
      expect(sut.cachedPrefix('tenant-a', toks(48))).toBe(32);
      expect(sut.blocks.numCached).toBe(3);
    });

    it('keeps generated tokens: the next turn finds prompt and reply', () => {
      const sut = new KvBlockLedger('m', 64);
      const prompt = toks(30);
      sut.open('turn1', 't');
      sut.append([{ seqId: 'turn1', tokens: prompt.length, ids: prompt }]);
      sut.commit(['turn1']);
      const reply = toks(25, 9);
      for (const t of reply) {
        sut.append([{ seqId: 'turn1', tokens: 1, ids: [t] }]);
        sut.commit(['turn1']);
      }
      sut.release('turn1');
      const next = [...prompt, ...reply, ...toks(20, 5)];
      expect(sut.cachedPrefix('t', next)).toBe(48);
    });

    it('shares the blocks of a running sequence once they are committed, not before', () => {
      const sut = new KvBlockLedger('m', 64);
      sut.open('a', 't');
      sut.append([{ seqId: 'a', tokens: 40, ids: toks(40) }]);
      expect(sut.cachedPrefix('t', toks(40))).toBe(0);
      sut.commit(['a']);
      expect(run(sut, 'b', toks(40), 't', false)).toBe(32);
      expect(sut.blockIds('b').slice(0, 2)).toEqual(sut.blockIds('a').slice(0, 2));
      expect(sut.blocks.refCount(sut.blockIds('a')[0]!)).toBe(2);
    });

    it('two sequences computing the same blocks at once: the first keeps the name, the copy is freed', () => {
      const sut = new KvBlockLedger('m', 64);
      for (const id of ['a', 'b']) {
        sut.open(id, 't');
        sut.append([{ seqId: id, tokens: 32, ids: toks(32) }]);
      }
      sut.commit(['a', 'b']);
      sut.release('b');
      expect(sut.blocks.counts()).toEqual({ capacity: 64, free: 62, cached: 0, staged: 0, active: 2 });
      sut.release('a');
      expect(sut.blocks.numCached).toBe(2);
      sut.blocks.checkInvariant();
    });
  });

  describe('prefixCost', () => {
    it.each([
      ['nothing cached: every block is new', false, false, { cachedTokens: 0, blocks: 3 }],
      ['hits nobody holds come out of the reclaimable pool', true, false, { cachedTokens: 32, blocks: 3 }],
      ['hits a running sequence holds cost nothing', true, true, { cachedTokens: 32, blocks: 1 }],
    ])('%s', (_name, warm, held, expected) => {
      const sut = new KvBlockLedger('m', 16);
      if (warm) run(sut, 'a', toks(40), 't', !held);
      expect(sut.prefixCost('t', toks(40))).toEqual(expected);
    });

    it('without a salt nothing is shared', () => {
      const sut = new KvBlockLedger('m', 16);
      run(sut, 'a', toks(40));
      expect(sut.prefixCost(undefined, toks(40))).toEqual({ cachedTokens: 0, blocks: 3 });
    });

    it("reuses the caller's block keys for the same tokens, keyed up to the first miss", () => {
      const sut = new KvBlockLedger('m', 16);
      run(sut, 'a', toks(40), 't', false);
      const keys = new BlockKeyChain('m', 't');
      expect(sut.prefixCost('t', toks(100), keys)).toEqual(sut.prefixCost('t', toks(100)));
      expect(keys.keys).toEqual(blockKeys('m', 't', toks(32)));
      expect(() => sut.prefixCost('other', toks(100), keys)).toThrow(RangeError);
    });

    it('a sequence opened with keys the caller computed names the same blocks as one that hashes its own', () => {
      const a = new KvBlockLedger('m', 16);
      const b = new KvBlockLedger('m', 16);
      const keys = new BlockKeyChain('m', 't');
      keys.extend(toks(100));
      b.open('x', 't', keys);
      for (const sut of [a, b]) {
        if (!sut.has('x')) sut.open('x', 't');
        const rest = toks(40);
        sut.append([{ seqId: 'x', tokens: rest.length, ids: rest }]);
        sut.commit(['x']);
      }
      expect(b.blockIds('x').map((id) => b.blocks.keyOf(id))).toEqual(a.blockIds('x').map((id) => a.blocks.keyOf(id)));
      expect(() => b.open('y', 'other', keys)).toThrow(RangeError);
    });
  });

  describe('capacity', () => {
    it('append is all or nothing across the batch', () => {
      const sut = new KvBlockLedger('m', 3);
      sut.open('a');
      sut.open('b');
      expect(
        sut.append([
          { seqId: 'a', tokens: 32 },
          { seqId: 'b', tokens: 17 },
        ]),
      ).toBeNull();
      expect([sut.length('a'), sut.length('b'), sut.blocks.numFree]).toEqual([0, 0, 3]);
      expect(
        sut.append([
          { seqId: 'a', tokens: 32 },
          { seqId: 'b', tokens: 16 },
        ]),
      ).not.toBeNull();
    });

    it('cached blocks count as available and are reclaimed tail first', () => {
      const sut = new KvBlockLedger('m', 4);
      run(sut, 'a', toks(64));
      expect(sut.blocks.numCached).toBe(4);
      sut.open('b');
      sut.append([{ seqId: 'b', tokens: 2 * BLOCK_TOKENS }]);
      // The two last blocks of 'a' went first: its head is still a usable prefix.
      expect(sut.cachedPrefix('t', toks(64))).toBe(32);
    });

    it('usage counts held blocks only', () => {
      const sut = new KvBlockLedger('m', 8);
      run(sut, 'a', toks(64), 't', false);
      expect(sut.usage()).toBe(0.5);
      sut.release('a');
      expect(sut.usage()).toBe(0);
    });

    it('a sharing sequence must give its token ids', () => {
      const sut = new KvBlockLedger('m', 8);
      sut.open('a', 't');
      expect(() => sut.append([{ seqId: 'a', tokens: 3 }])).toThrow(RangeError);
      expect(sut.length('a')).toBe(0);
    });
  });
});
