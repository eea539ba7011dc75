import { create } from '@bufbuild/protobuf';
import { CHUNK_TOKENS, ErrorCode, chunkKeys } from '@mnemo/kv-core';
import { ByteTokenizer, applyChatTemplate } from '@mnemo/engine';
import { ModelInfoSchema } from '@mnemo/proto';
import type { InferCommand, PromptInput } from './infer.command.js';
import { buildPrompt } from './prompt.builder.js';

const tok = new ByteTokenizer();
const model = create(ModelInfoSchema, { id: 'mnemo-tiny', engine: 'sim', maxContext: 1024, vocabSize: tok.vocabSize });

function command(input: PromptInput, maxTokens?: number, tenant = 't1'): InferCommand {
  return { operation: 'completions', tenant, model: 'mnemo-tiny', input, maxTokens, temperature: 1, topP: 1, stop: [], priority: 0 };
}

describe(buildPrompt.name, () => {
  it('applies the chat template and keys complete chunks with the tenant salt', () => {
    const messages = [{ role: 'user' as const, content: 'x'.repeat(600) }];
    const sut = buildPrompt(command({ kind: 'chat', messages }, 10), model, tok, 8192);
    expect(sut.tokens).toEqual(applyChatTemplate(tok, messages));
    expect(sut.chunkKeys).toHaveLength(Math.floor(sut.tokens.length / CHUNK_TOKENS));
    expect(sut.chunkKeys).toEqual(chunkKeys('mnemo-tiny', 't1', sut.tokens));
    expect(buildPrompt(command({ kind: 'chat', messages }, 10, 't2'), model, tok, 8192).chunkKeys).not.toEqual(sut.chunkKeys);
    expect(sut.maxTokens).toBe(10);
  });

  it('starts raw text with BOS and passes token ids through', () => {
    expect(buildPrompt(command({ kind: 'text', text: 'ab' }, 1), model, tok, 8192).tokens).toEqual([tok.bosTokenId, 97, 98]);
    expect(buildPrompt(command({ kind: 'tokens', tokens: [5, 6] }, 1), model, tok, 8192).tokens).toEqual([5, 6]);
  });

  it('fills max tokens up to the context when unset', () => {
    expect(buildPrompt(command({ kind: 'tokens', tokens: [1, 2, 3, 4] }), model, tok, 8192).maxTokens).toBe(1020);
  });

  const rejected: Array<[string, InferCommand, number, ErrorCode, string]> = [
    ['prompt above the gateway limit', command({ kind: 'text', text: 'x'.repeat(100) }, 1), 50, ErrorCode.PromptTooLong, 'prompt'],
    [
      'prompt + max_tokens beyond the context',
      command({ kind: 'tokens', tokens: Array(1000).fill(1) }, 25),
      8192,
      ErrorCode.PromptTooLong,
      'prompt',
    ],
    ['prompt filling the whole context', command({ kind: 'tokens', tokens: Array(1024).fill(1) }), 8192, ErrorCode.PromptTooLong, 'prompt'],
    [
      'chat prompt beyond the context',
      command({ kind: 'chat', messages: [{ role: 'user', content: 'x'.repeat(2000) }] }),
      8192,
      ErrorCode.PromptTooLong,
      'messages',
    ],
    [
      'token id outside the vocabulary',
      command({ kind: 'tokens', tokens: [1, tok.vocabSize] }, 1),
      8192,
      ErrorCode.InvalidRequest,
      'prompt',
    ],
  ];
  it.each(rejected)('rejects %s', (_name, cmd, limit, code, param) => {
    expect(() => buildPrompt(cmd, model, tok, limit)).toThrow(
      expect.objectContaining({ code, details: expect.objectContaining({ param }) }),
    );
  });

  it('refuses a 2 MiB single word before tokenizing it whole', () => {
    const word = 'x'.repeat(2 << 20);
    const t0 = performance.now();
    for (const input of [
      { kind: 'text', text: word },
      { kind: 'chat', messages: [{ role: 'user', content: word }] },
    ] as PromptInput[]) {
      expect(() => buildPrompt(command(input, 1), model, tok, 8192)).toThrow(expect.objectContaining({ code: ErrorCode.PromptTooLong }));
    }
    expect(performance.now() - t0).toBeLessThan(500);
  });

  it('accepts a prompt that exactly fits', () => {
    expect(buildPrompt(command({ kind: 'tokens', tokens: Array(1000).fill(1) }, 24), model, tok, 8192).maxTokens).toBe(24);
  });
});
