import { createHash } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { jest } from '@jest/globals';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { BpeTokenizer, ByteTokenizer } from '@mnemo/engine';
import { ModelInfoSchema } from '@mnemo/proto';
import type { NodeClient } from '../nats/node.client.js';
import { RETRY_FAILED_AFTER_MS, TokenizerCache } from './tokenizer.cache.js';

const bundleOf = (tokenizer: object) => new TextEncoder().encode(JSON.stringify({ bos_token: null, eos_token: '<|im_end|>', tokenizer }));
/** Bytes 'h' (0) and 'e' (1), the merge 'he' (256), two special tokens. */
const GOOD = bundleOf({
  added_tokens: [
    { id: 257, content: '<|im_start|>', special: true },
    { id: 258, content: '<|im_end|>', special: true },
  ],
  model: { type: 'BPE', vocab: { h: 0, e: 1, he: 256 }, merges: ['h e'] },
});
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** The nodes' side as a port double: serves `bytes` in slices of `slice`, counting requests. */
class Nodes implements Pick<NodeClient, 'tokenizerChunk'> {
  requests = 0;
  constructor(
    private readonly bytes: Uint8Array | Error,
    private readonly slice = 100,
  ) {}
  async tokenizerChunk(_sha: string, offset: number) {
    this.requests++;
    if (this.bytes instanceof Error) throw this.bytes;
    return { totalBytes: this.bytes.length, data: this.bytes.subarray(offset, offset + this.slice) };
  }
}

const model = (tokenizer: string, tokenizerSha256 = '') =>
  create(ModelInfoSchema, { id: 'm', engine: 'reference', tokenizer, tokenizerSha256 });

describe(TokenizerCache.name, () => {
  afterEach(() => jest.useRealTimers());

  it('gives the byte tokenizer for synthetic models without asking a node', async () => {
    const nodes = new Nodes(GOOD);
    expect(await new TokenizerCache(nodes).get(model('byte'))).toBeInstanceOf(ByteTokenizer);
    expect(nodes.requests).toBe(0);
  });

  it('fetches a bundle slice by slice once per hash, and builds the tokenizer it describes', async () => {
    const nodes = new Nodes(GOOD, 100);
    const sut = new TokenizerCache(nodes);
    const [a, b] = await Promise.all([sut.get(model('bpe', sha(GOOD))), sut.get(model('bpe', sha(GOOD)))]);
    expect(a).toBe(b);
    expect(a).toBeInstanceOf(BpeTokenizer);
    expect(a.encode('he')).toEqual([256]);
    expect(a.eosTokenId).toBe(258);
    expect(nodes.requests).toBe(Math.ceil(GOOD.length / 100));
    await sut.get(model('bpe', sha(GOOD)));
    expect(nodes.requests).toBe(Math.ceil(GOOD.length / 100));
  });

  it('refuses bytes that do not match the advertised hash', async () => {
    const sut = new TokenizerCache(new Nodes(GOOD));
    await expect(sut.get(model('bpe', 'ab'.repeat(32)))).rejects.toThrow(/do not match the advertised hash/);
  });

  it('fails clearly, once, then answers from the cache until it is time to retry', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const nodes = new Nodes(new MnemoError(ErrorCode.NoNodeAvailable, 'no node with this tokenizer is running'));
    const sut = new TokenizerCache(nodes);
    const m = model('bpe', sha(GOOD));
    await expect(sut.get(m)).rejects.toMatchObject({
      code: ErrorCode.NoNodeAvailable,
      message: expect.stringContaining("the tokenizer of model 'm'"),
    });
    await expect(sut.get(m)).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
    expect(nodes.requests).toBe(1);
    jest.setSystemTime(1_000_000 + RETRY_FAILED_AFTER_MS);
    await expect(sut.get(m)).rejects.toMatchObject({ code: ErrorCode.NoNodeAvailable });
    expect(nodes.requests).toBe(2);
  });

  it('says plainly when the node has no tokenizer for the model', async () => {
    await expect(new TokenizerCache(new Nodes(GOOD)).get(model(''))).rejects.toMatchObject({
      code: ErrorCode.Internal,
      message: expect.stringContaining('no tokenizer.json'),
    });
  });
});
