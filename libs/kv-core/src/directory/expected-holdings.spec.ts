import { chunkBlockKeys, chunkKeys } from '../keys/index.js';
import { ExpectedHoldings, expectedPrompt, RECORDED_PROMPT_SCAN_CHUNKS } from './expected-holdings.js';
import { KvDirectory } from './kv.directory.js';

const M = 'm';
const S = 'tenant';
const toks = (n: number, seed = 1) => Array.from({ length: n }, (_, i) => (i * 37 + seed * 11) % 251);
const prompt = (tokens: number[]) => expectedPrompt(M, S, tokens, chunkKeys(M, S, tokens));
const TTL = 1000;

describe(ExpectedHoldings.name, () => {
  describe(expectedPrompt.name, () => {
    it.each([
      ['under one block: no prompt key', 15, 0, undefined],
      ['a 100-token first turn: 6 full blocks, no whole chunk', 100, 0, 96],
      ['exactly one chunk: the prompt key is the chunk key', 256, 1, 256],
      ['one chunk and 7 tokens: the chunk key again', 263, 1, 256],
      ['two chunks and 40 tokens', 552, 2, 544],
    ])('%s', (_name, n, chunks, keyTokens) => {
      const tokens = toks(n);
      const p = prompt(tokens);
      expect(p.chunkKeys).toHaveLength(chunks);
      expect(p.promptKeyTokens).toBe(keyTokens);
      if (keyTokens === undefined) return expect(p.promptKey).toBeUndefined();
      // The key of the last full block names exactly the first keyTokens tokens.
      const c = Math.floor((keyTokens - 1) / 256);
      const cut = tokens.slice(0, keyTokens);
      expect(p.promptKey).toBe(chunkBlockKeys(M, S, cut, chunkKeys(M, S, cut), c).at(-1));
    });

    it('chunk keys that do not fit the tokens expect nothing', () => {
      expect(expectedPrompt(M, S, toks(300), [])).toEqual({ chunkKeys: [] });
    });
  });

  describe('longestRecordedPrompt', () => {
    // turn 1: a prompt; turn 2: turn 1 extended by a reply and a new message.
    it.each([
      ['a 100-token first turn, no whole chunk, extended to 250', 100, 150, 96],
      ['a 100-token first turn extended past a chunk', 100, 400, 96],
      ['a turn ending 3 tokens past a chunk: found as the chunk key', 259, 100, 256],
      ['a turn of 700 tokens extended by 900', 700, 900, 688],
    ])('finds the node of %s', (_name, n1, added, covered) => {
      const sut = new ExpectedHoldings(1000, TTL);
      const turn1 = toks(n1);
      const turn2 = [...turn1, ...toks(added, 9)];
      sut.record('a', prompt(turn1), 0);
      sut.record('b', prompt(toks(n1, 5)), 0);
      expect(sut.longestRecordedPrompt(M, S, turn2, chunkKeys(M, S, turn2), 10)).toEqual({ nodeId: 'a', tokens: covered });
    });

    it.each([
      ['another tenant', (t: number[]) => ({ salt: 'other', tokens: t })],
      ['a prompt that diverges inside the recorded one', (t: number[]) => ({ salt: S, tokens: [...t.slice(0, 40), ...toks(200, 7)] })],
      ['a prompt shorter than the recorded one', (t: number[]) => ({ salt: S, tokens: t.slice(0, 80) })],
    ])('finds nothing for %s', (_name, make) => {
      const sut = new ExpectedHoldings(1000, TTL);
      const turn1 = toks(100);
      sut.record('a', prompt(turn1), 0);
      const { salt, tokens } = make([...turn1, ...toks(150, 9)]);
      expect(sut.longestRecordedPrompt(M, salt, tokens, chunkKeys(M, salt, tokens), 10)).toBeNull();
    });

    it('prefers the longest recorded prompt, then the most recent node', () => {
      const sut = new ExpectedHoldings(1000, TTL);
      const turn1 = toks(100);
      const turn2 = [...turn1, ...toks(150, 9)];
      const turn3 = [...turn2, ...toks(60, 3)];
      sut.record('a', prompt(turn1), 0);
      sut.record('b', prompt(turn2), 1);
      sut.record('c', prompt(turn1), 2);
      expect(sut.longestRecordedPrompt(M, S, turn3, chunkKeys(M, S, turn3), 10)).toEqual({ nodeId: 'b', tokens: 240 });
      expect(sut.longestRecordedPrompt(M, S, [...turn1, 5, 6, 7], chunkKeys(M, S, [...turn1, 5, 6, 7]), 10)).toEqual({
        nodeId: 'c',
        tokens: 96,
      });
    });

    it(`looks back at most ${RECORDED_PROMPT_SCAN_CHUNKS} chunks from the end`, () => {
      const sut = new ExpectedHoldings(1000, TTL);
      const turn1 = toks(100);
      sut.record('a', prompt(turn1), 0);
      const near = [...turn1, ...toks(RECORDED_PROMPT_SCAN_CHUNKS * 256 - 200, 3)];
      const far = [...turn1, ...toks(RECORDED_PROMPT_SCAN_CHUNKS * 256, 3)];
      expect(sut.longestRecordedPrompt(M, S, near, chunkKeys(M, S, near), 1)?.nodeId).toBe('a');
      expect(sut.longestRecordedPrompt(M, S, far, chunkKeys(M, S, far), 1)).toBeNull();
    });
  });

  describe('lifecycle of an expectation', () => {
    const turn1 = toks(300);
    const p = prompt(turn1);
    const turn2 = [...turn1, ...toks(100, 9)];
    const found = (sut: ExpectedHoldings, now = 10) => ({
      chunk: sut.holders(p.chunkKeys[0]!, now),
      prompt: sut.longestRecordedPrompt(M, S, turn2, chunkKeys(M, S, turn2), now)?.nodeId ?? null,
    });

    it.each<
      [string, (sut: ExpectedHoldings) => void, { chunk: string[]; prompt: string | null }, Partial<ReturnType<ExpectedHoldings['stats']>>]
    >([
      ['recorded', () => undefined, { chunk: ['a'], prompt: 'a' }, { holdings: 2 }],
      [
        'confirmed by a KV event: the chunk goes to the directory, the prompt key stays',
        (s) => s.confirm('a', p.chunkKeys),
        { chunk: [], prompt: 'a' },
        { holdings: 1, confirmed: 1 },
      ],
      [
        'confirmed on another node: nothing changes',
        (s) => s.confirm('b', p.chunkKeys),
        { chunk: ['a'], prompt: 'a' },
        { holdings: 2, confirmed: 0 },
      ],
      [
        'evicted on the node',
        (s) => s.remove('a', [p.chunkKeys[0]!, p.promptKey!]),
        { chunk: [], prompt: null },
        { holdings: 0, removed: 2 },
      ],
      [
        'its dispatch failed',
        (s) => s.forget({ nodeId: 'a', chunkKeys: p.chunkKeys, promptKey: p.promptKey! }),
        { chunk: [], prompt: null },
        { holdings: 0, removed: 2 },
      ],
      ['the node left', (s) => s.dropNode('a'), { chunk: [], prompt: null }, { holdings: 0 }],
    ])('%s', (_name, act, expected, stats) => {
      const sut = new ExpectedHoldings(1000, TTL);
      sut.record('a', p, 0);
      act(sut);
      expect(found(sut)).toEqual(expected);
      expect(sut.stats(10)).toMatchObject(stats);
    });

    it('expires after its TTL, and a new routing of the same prompt renews it', () => {
      const sut = new ExpectedHoldings(1000, TTL);
      sut.record('a', p, 0);
      expect(found(sut, TTL - 1)).toEqual({ chunk: ['a'], prompt: 'a' });
      expect(found(sut, TTL)).toEqual({ chunk: [], prompt: null });
      sut.record('a', p, 500);
      expect(found(sut, TTL + 10)).toEqual({ chunk: ['a'], prompt: 'a' });
      expect(sut.stats(TTL + 10)).toMatchObject({ holdings: 2, expired: 0 });
      expect(sut.stats(TTL + 500)).toMatchObject({ holdings: 0, expired: 2 });
    });
  });

  describe('bounded memory', () => {
    it('never holds more than the bound, forgetting the oldest recorded first', () => {
      const sut = new ExpectedHoldings(100, 60_000);
      const prompts = Array.from({ length: 200 }, (_, i) => prompt(toks(260, i)));
      prompts.forEach((q, i) => sut.record(`n${i % 3}`, q, i));
      // Each 260-token prompt records its chunk key and its prompt key (the same key, two kinds).
      expect(sut.stats(200)).toEqual({ holdings: 100, confirmed: 0, removed: 0, expired: 0, evicted: 300 });
      expect(sut.holders(prompts[199]!.chunkKeys[0]!, 200)).toEqual(['n1']);
      expect(sut.holders(prompts[0]!.chunkKeys[0]!, 200)).toEqual([]);
      for (let i = 0; i < 3; i++) sut.dropNode(`n${i}`);
      expect(sut.stats(200).holdings).toBe(0);
    });

    it.each([
      [0, 1000],
      [1.5, 1000],
      [10, 0],
      [10, NaN],
    ])('refuses a bound of %p pairs or a TTL of %p ms', (max, ttl) => {
      expect(() => new ExpectedHoldings(max, ttl)).toThrow(RangeError);
    });
  });

  describe('through KvDirectory.prefixes', () => {
    const keys = ['k0', 'k1', 'k2'];
    it.each<[string, Array<[string, string[]]>, Array<[string, string[]]>, Array<[string, number, string[]]>]>([
      ['expected only: counted on the device', [], [['a', keys]], [['a', 3, ['device', 'device', 'device']]]],
      ['directory then expected: the chain goes on', [['a', ['k0']]], [['a', ['k1', 'k2']]], [['a', 3, ['host', 'device', 'device']]]],
      ['expected on a node the directory lists on host: the device is faster', [['a', ['k0']]], [['a', ['k0']]], [['a', 1, ['device']]]],
      ['a gap in what is expected ends the prefix', [], [['a', ['k0', 'k2']]], [['a', 1, ['device']]]],
      [
        'two nodes',
        [['a', keys]],
        [['b', ['k0', 'k1']]],
        [
          ['a', 3, ['host', 'host', 'host']],
          ['b', 2, ['device', 'device']],
        ],
      ],
    ])('%s', (_name, stored, expected, out) => {
      const directory = new KvDirectory(100);
      for (const [node, k] of stored) directory.apply(node, [{ kind: 'stored', tier: 'host', keys: k }]);
      const sut = new ExpectedHoldings(100, TTL);
      for (const [node, k] of expected) sut.record(node, { chunkKeys: k }, 0);
      expect(directory.prefixes(keys, (k) => sut.holders(k, 1)).map((p) => [p.nodeId, p.prefixChunks, p.tiers])).toEqual(out);
    });
  });
});
