import { gzipSync } from 'node:zlib';
import { CHUNK_TOKENS, chunkKeys } from '@mnemo/kv-core';
import { loadTrace, parseTraceLine, traceText } from './mooncake.trace.js';
import { TraceBlockBook } from './trace.blocks.js';
import { reusableChunks, traceStats } from './trace.stats.js';

const line = (timestamp: number, input: number, output: number, ids: number[]) =>
  JSON.stringify({ timestamp, input_length: input, output_length: output, hash_ids: ids });

// Two conversations sharing block 0; the second's second turn extends its first.
const SMALL = [line(0, 1100, 10, [0, 1, 2]), line(1000, 700, 5, [0, 3]), line(3000, 1536, 7, [0, 3, 4])].join('\n');

describe('trace loader', () => {
  it('turns block ids into kv-core chunk keys of the blocks seeded tokens, chained so equal ids give equal prefixes', () => {
    const t = loadTrace(SMALL);
    const [a, b, c] = t.requests;
    // 1,100 tokens: two whole blocks (4 chunks) and 76 tokens (no whole chunk).
    expect(a!.chunkKeys).toHaveLength(4);
    // 700 tokens: one block (2 chunks) and 188 tokens.
    expect(b!.chunkKeys).toHaveLength(2);
    expect(c!.chunkKeys).toHaveLength(6);
    expect(b!.chunkKeys.slice(0, 2)).toEqual(a!.chunkKeys.slice(0, 2));
    expect(c!.chunkKeys.slice(0, 2)).toEqual(b!.chunkKeys);
    expect(a!.chunkKeys[2]).not.toEqual(c!.chunkKeys[2]);
    // The keys are exactly kv-core's over the prompt's tokens.
    const tokens = t.blocks.promptTokens(c!.blockIds, c!.lastBlockTokens);
    expect(tokens).toHaveLength(1536);
    expect(chunkKeys('llama3-70b', '', tokens)).toEqual(c!.chunkKeys);
    expect(t.blocks.size).toBe(5);
  });

  it.each([
    { name: "the trace's own blocks", tokensPerBlock: 512, input: [1100, 700, 1536], output: [10, 5, 7], chunks: [4, 2, 6] },
    { name: 'half-size blocks', tokensPerBlock: 256, input: [550, 350, 768], output: [5, 3, 4], chunks: [2, 1, 3] },
    { name: 'double blocks', tokensPerBlock: 1024, input: [2200, 1400, 3072], output: [20, 10, 14], chunks: [8, 5, 12] },
  ])('scales lengths by tokens per block: $name', ({ tokensPerBlock, input, output, chunks }) => {
    const t = loadTrace(SMALL, { tokensPerBlock });
    expect(t.requests.map((r) => r.inputTokens)).toEqual(input);
    expect(t.requests.map((r) => r.outputTokens)).toEqual(output);
    expect(t.requests.map((r) => r.chunkKeys.length)).toEqual(chunks);
  });

  it.each([
    { opts: {}, lines: [0, 1, 2], arrivals: [0, 1000, 3000] },
    { opts: { timeScale: 0.5 }, lines: [0, 1, 2], arrivals: [0, 500, 1500] },
    { opts: { from: 1 }, lines: [1, 2], arrivals: [0, 2000] },
    { opts: { from: 1, limit: 1 }, lines: [1], arrivals: [0] },
  ])('slices and rescales time: $opts', ({ opts, lines, arrivals }) => {
    const t = loadTrace(SMALL, opts);
    expect(t.requests.map((r) => r.line)).toEqual(lines);
    expect(t.requests.map((r) => r.arrivalMs)).toEqual(arrivals);
  });

  it.each([
    ['not JSON', '{', /not JSON/],
    ['a negative timestamp', line(-1, 10, 1, [0]), /timestamp/],
    ['no input', line(0, 0, 1, []), /input_length/],
    ['a fractional output', JSON.stringify({ timestamp: 0, input_length: 10, output_length: 1.5, hash_ids: [0] }), /output_length/],
    ['a string id', JSON.stringify({ timestamp: 0, input_length: 10, output_length: 1, hash_ids: ['a'] }), /hash_ids/],
    ['too few ids', line(0, 600, 1, [0]), /1 hash_ids for 600/],
  ])('rejects a line with %s', (_name, text, message) => {
    expect(() => parseTraceLine(text, 0)).toThrow(message);
  });

  it.each([
    ['a zero time scale', { timeScale: 0 }, /time scale/],
    ['blocks off the chunk grid', { tokensPerBlock: 300 }, /multiple of 256/],
    ['a start past the end', { from: 3 }, /no requests/],
    ['a zero limit', { limit: 0 }, /limit/],
  ])('rejects %s', (_name, opts, message) => {
    expect(() => loadTrace(SMALL, opts)).toThrow(message);
  });

  it('rejects a block id seen after two different parents', () => {
    expect(() => loadTrace([line(0, 1024, 1, [0, 1]), line(1, 1024, 1, [2, 1])].join('\n'))).toThrow(/not a prefix chain/);
  });

  it.each([
    ['plain', (t: string) => Buffer.from(t)],
    ['gzipped', (t: string) => gzipSync(t)],
  ])('reads a %s file', (_n, encode) => {
    expect(traceText(encode(SMALL))).toBe(SMALL);
  });

  it("draws a block's tokens from its id alone", () => {
    const a = new TraceBlockBook({ tokensPerBlock: 512, model: 'm', salt: '', vocab: 1000 });
    const b = new TraceBlockBook({ tokensPerBlock: 512, model: 'm', salt: '', vocab: 1000 });
    expect(a.tokens(7)).toEqual(b.tokens(7));
    expect(a.tokens(7)).not.toEqual(a.tokens(8));
    expect(Math.max(...a.tokens(7))).toBeLessThan(1000);
  });
});

describe('trace statistics', () => {
  it('counts the leading chunks earlier requests had as the maximum hit rate', () => {
    const t = loadTrace(SMALL);
    expect(reusableChunks(t.requests)).toEqual([0, 2, 2]);
    const s = traceStats(t);
    expect(s.max_hit_rate).toBeCloseTo((4 * CHUNK_TOKENS) / (1100 + 700 + 1536), 4);
    expect(s).toMatchObject({ requests: 3, duration_s: 3, input_mean: 1112, output_mean: 7, unique_blocks: 5, unique_block_tokens: 2560 });
  });
});
