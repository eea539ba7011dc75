import { chatFormat, textFormat, toOpenAiUsage } from './openai.formats.js';
import { SSE_DONE, sseFrame } from './sse.writer.js';

const h = { id: 'chatcmpl-1', model: 'mnemo-tiny', created: 1700000000 };
const usage = toOpenAiUsage({ promptTokens: 5, completionTokens: 3, cachedTokens: 2 });

describe('OpenAI response formats', () => {
  it('computes total_tokens', () => {
    expect(usage).toEqual({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8, prompt_tokens_details: { cached_tokens: 2 } });
  });

  it("adds kv_reuse only when the node reused a base model's KV, the OpenAI fields unchanged", () => {
    const kvReuse = { baseModel: 'mnemo-small', pattern: { r1: 0, u1: 0, r2: 4 }, recomputedLayers: [0, 1, 2, 3], reusedTokens: 256 };
    expect(toOpenAiUsage({ promptTokens: 5, completionTokens: 3, cachedTokens: 0, kvReuse })).toEqual({
      prompt_tokens: 5,
      completion_tokens: 3,
      total_tokens: 8,
      prompt_tokens_details: { cached_tokens: 0 },
      kv_reuse: { base_model: 'mnemo-small', pattern: { r1: 0, u1: 0, r2: 4 }, recomputed_layers: [0, 1, 2, 3], reused_tokens: 256 },
    });
    expect(usage).not.toHaveProperty('kv_reuse');
  });

  it('shapes a chat completion', () => {
    expect(chatFormat.complete(h, 'hi', 'stop', usage)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'mnemo-tiny',
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage,
    });
  });

  it('shapes chat chunks: role first, content deltas, finish with usage, usage-only chunk', () => {
    expect(chatFormat.opening(h)).toMatchObject({
      object: 'chat.completion.chunk',
      choices: [{ delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(chatFormat.delta(h, 'x')).toMatchObject({ choices: [{ index: 0, delta: { content: 'x' }, finish_reason: null }] });
    expect(chatFormat.finish(h, 'length', usage)).toMatchObject({ choices: [{ delta: {}, finish_reason: 'length' }], usage });
    expect(chatFormat.finish(h, 'stop', null)).not.toHaveProperty('usage');
    expect(chatFormat.usageOnly(h, usage)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1700000000,
      model: 'mnemo-tiny',
      choices: [],
      usage,
    });
  });

  it('shapes text completions and their chunks', () => {
    expect(textFormat.opening(h)).toBeUndefined();
    expect(textFormat.complete(h, 'abc', 'length', usage)).toMatchObject({
      object: 'text_completion',
      choices: [{ index: 0, text: 'abc', logprobs: null, finish_reason: 'length' }],
      usage,
    });
    expect(textFormat.delta(h, 'a')).toMatchObject({ object: 'text_completion', choices: [{ text: 'a', finish_reason: null }] });
    expect(textFormat.finish(h, 'stop', usage)).toMatchObject({ choices: [{ text: '', finish_reason: 'stop' }], usage });
  });
});

describe(sseFrame.name, () => {
  it('writes one data line per event, JSON newlines escaped', () => {
    expect(sseFrame({ a: 'x\ny' })).toBe('data: {"a":"x\\ny"}\n\n');
    expect(SSE_DONE).toBe('data: [DONE]\n\n');
  });
});
