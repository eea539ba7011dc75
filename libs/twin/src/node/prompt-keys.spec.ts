import { chunkBlockKeys, chunkKeys, CHUNK_TOKENS } from '@mnemo/kv-core';
import { PromptKeys } from './prompt-keys.js';

const toks = (n: number, salt = 1) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);

describe(PromptKeys.name, () => {
  const prompt = toks(2 * CHUNK_TOKENS + 100);
  const keys = chunkKeys('m', 't', prompt);

  it.each([0, 1, 2, 3])("gives chunk %i's block keys as chunkBlockKeys does", (c) => {
    expect(new PromptKeys('m', 't', prompt).blockKeys(c)).toEqual(chunkBlockKeys('m', 't', prompt, keys, c));
  });

  it('seeded with the keys of the previous turn it starts with, gives the same keys', () => {
    const previous = new PromptKeys('m', 't', prompt.slice(0, CHUNK_TOKENS + 40));
    previous.blockKeys(1);
    const sut = new PromptKeys('m', 't', prompt, previous.chain.keys);
    for (const c of [0, 1, 2]) expect(sut.blockKeys(c)).toEqual(chunkBlockKeys('m', 't', prompt, keys, c));
  });

  it('drops seed keys past the prompt', () => {
    const long = new PromptKeys('m', 't', prompt);
    long.blockKeys(2);
    const short = prompt.slice(0, 40);
    expect(new PromptKeys('m', 't', short, long.chain.keys).chain.keys).toHaveLength(2);
  });
});
