import { ErrorCode } from '@mnemo/kv-core';
import { ByteTokenizer } from '../tokenizer/byte-tokenizer.js';
import { SimEngine, type SimStep } from './sim.engine.js';
import { SIM_FIRST_PRINTABLE, SIM_LAST_PRINTABLE } from './sim-token.stream.js';

const tok = new ByteTokenizer();
const zeroCost = { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0 };

async function generate(sut: SimEngine, seqId: string, prompt: string, seed: number, n: number, temperature = 0.8): Promise<number[]> {
  const out = [
    (await sut.prefill([{ seqId, model: 'mnemo-tiny', tokens: tok.encode(prompt), sampling: { temperature, topP: 1, seed } }]))[0].token,
  ];
  while (out.length < n) out.push((await sut.decode([seqId]))[0].token);
  sut.release(seqId);
  return out;
}

describe(SimEngine.name, () => {
  it('serves mnemo-tiny with the byte vocabulary of the synthetic catalog', () => {
    const sut = new SimEngine();
    expect(sut.models()).toEqual([
      { id: 'mnemo-tiny', engine: 'sim', vocabSize: tok.vocabSize, maxContext: 4096, eosTokenId: tok.eosTokenId },
    ]);
  });

  it('rejects models outside the catalog at construction', () => {
    expect(() => new SimEngine({ models: ['gpt-9'] })).toThrow(/unknown model/);
  });

  it('gives the same tokens for the same seed and prompt, on another engine instance too', async () => {
    const a = await generate(new SimEngine({ cost: zeroCost }), 's1', 'hello', 42, 20);
    const b = await generate(new SimEngine({ cost: zeroCost }), 's2', 'hello', 42, 20);
    expect(b).toEqual(a);
  });

  it('gives different tokens for another seed or another prompt', async () => {
    const sut = new SimEngine({ cost: zeroCost });
    const base = await generate(sut, 'a', 'hello', 42, 20);
    expect(await generate(sut, 'b', 'hello', 43, 20)).not.toEqual(base);
    expect(await generate(sut, 'c', 'hellp', 42, 20)).not.toEqual(base);
  });

  it('ignores the seed when greedy', async () => {
    const sut = new SimEngine({ cost: zeroCost });
    expect(await generate(sut, 'a', 'x', 1, 10, 0)).toEqual(await generate(sut, 'b', 'x', 2, 10, 0));
  });

  it('emits printable ASCII that the byte tokenizer decodes to text', async () => {
    const tokens = await generate(new SimEngine({ cost: zeroCost }), 'a', 'p', 7, 200);
    for (const t of tokens) expect(t >= SIM_FIRST_PRINTABLE && t <= SIM_LAST_PRINTABLE).toBe(true);
    expect(tok.decode(tokens)).toHaveLength(200);
  });

  it('emits EOS when configured to, never otherwise', async () => {
    const always = await generate(new SimEngine({ cost: zeroCost, eosProbability: 1 }), 'a', 'p', 1, 3);
    expect(always).toEqual([tok.eosTokenId, tok.eosTokenId, tok.eosTokenId]);
    const never = await generate(new SimEngine({ cost: zeroCost }), 'a', 'p', 1, 500);
    expect(never).not.toContain(tok.eosTokenId);
  });

  it('waits the modelled time through its clock port, batched decode as one step', async () => {
    const waits: number[] = [];
    const steps: SimStep[] = [];
    const cost = { prefillBaseMs: 1, prefillPerTokenMs: 0.5, decodeBaseMs: 2, decodePerSeqMs: 1, decodePerKContextMs: 0 };
    const sut = new SimEngine({ cost, sleep: async (ms) => void waits.push(ms), onStep: (s) => steps.push(s) });
    const sampling = { temperature: 1, topP: 1, seed: 1 };
    await sut.prefill([
      { seqId: 'a', model: 'mnemo-tiny', tokens: [1, 2, 3, 4], sampling },
      { seqId: 'b', model: 'mnemo-tiny', tokens: [5, 6], sampling },
    ]);
    const out = await sut.decode(['a', 'b']);
    expect(out.map((o) => o.seqId)).toEqual(['a', 'b']);
    expect(waits).toEqual([1 + 0.5 * 6, 2 + 1 * 2]);
    expect(steps.map((s) => [s.kind, s.seqIds])).toEqual([
      ['prefill', ['a', 'b']],
      ['decode', ['a', 'b']],
    ]);
  });

  it('serves a longer context when told to, and refuses a nonsense one', () => {
    expect(new SimEngine({ maxContext: 32_768 }).models()[0]?.maxContext).toBe(32_768);
    expect(() => new SimEngine({ maxContext: 1 })).toThrow(RangeError);
  });

  it('really waits with the default timer', async () => {
    const sut = new SimEngine({ cost: { ...zeroCost, prefillBaseMs: 30 } });
    const t0 = performance.now();
    await sut.prefill([{ seqId: 'a', model: 'mnemo-tiny', tokens: [1], sampling: { temperature: 1, topP: 1, seed: 1 } }]);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(25);
  });

  it('drops a sequence released while its step runs, and release is idempotent', async () => {
    let wake!: () => void;
    const sut = new SimEngine({ sleep: () => new Promise<void>((r) => (wake = r)) });
    const sampling = { temperature: 1, topP: 1, seed: 1 };
    const pending = sut.prefill([
      { seqId: 'a', model: 'mnemo-tiny', tokens: [1], sampling },
      { seqId: 'b', model: 'mnemo-tiny', tokens: [2], sampling },
    ]);
    await Promise.resolve();
    sut.release('a');
    sut.release('a');
    sut.release('never-seen');
    wake();
    expect((await pending).map((o) => o.seqId)).toEqual(['b']);
    expect(sut.activeSequences).toBe(1);
  });

  it.each([
    ['unknown model', { model: 'nope', tokens: [1] }, ErrorCode.ModelNotFound],
    ['empty prompt', { model: 'mnemo-tiny', tokens: [] }, ErrorCode.InvalidRequest],
    ['prompt filling the context', { model: 'mnemo-tiny', tokens: new Array(4096).fill(65) }, ErrorCode.PromptTooLong],
  ])('refuses %s with a coded error', async (_n, input, code) => {
    const sut = new SimEngine({ cost: zeroCost });
    await expect(sut.prefill([{ seqId: 'x', sampling: { temperature: 1, topP: 1, seed: 1 }, ...input }])).rejects.toMatchObject({ code });
  });

  it('refuses to decode past the context limit', async () => {
    const sut = new SimEngine({ cost: zeroCost });
    await sut.prefill([
      { seqId: 'x', model: 'mnemo-tiny', tokens: new Array(4095).fill(65), sampling: { temperature: 1, topP: 1, seed: 1 } },
    ]);
    await expect(sut.decode(['x'])).rejects.toThrow(/context limit/);
  });

  it('models KV usage as the blocks of live contexts over its capacity', async () => {
    const sut = new SimEngine({ cost: zeroCost, kvBlocks: 10, sleep: async () => undefined });
    expect(sut.kvUsage()).toBe(0);
    await sut.prefill([
      { seqId: 'a', model: 'mnemo-tiny', tokens: new Array(15).fill(65), sampling: { temperature: 0, topP: 1, seed: 0 } },
    ]);
    expect(sut.kvUsage()).toBe(0.1);
    await sut.decode(['a']); // the first sampled token enters the KV: 16 tokens, still one block
    expect(sut.kvUsage()).toBe(0.1);
    await sut.decode(['a']); // 17 tokens: a second block
    expect(sut.kvUsage()).toBe(0.2);
    sut.release('a');
    expect(sut.kvUsage()).toBe(0);
    expect(() => new SimEngine({ kvBlocks: 0 })).toThrow(RangeError);
  });
});
