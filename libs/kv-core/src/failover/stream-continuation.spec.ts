import { continuedUsage, planContinuation, seedPromptLength, type ContinuationPlan, type StreamSoFar } from './stream-continuation.js';

const prompt = [1, 2, 3];

describe(planContinuation.name, () => {
  it.each<[string, StreamSoFar, number, ContinuationPlan]>([
    [
      'down before the first token: the prompt as it was, no draw skipped',
      { prompt, streamed: [], maxTokens: 8, failovers: 0 },
      2,
      { kind: 'continue', tokens: [1, 2, 3], drawOffset: 0, maxTokens: 8 },
    ],
    [
      'mid-stream: streamed tokens join the prompt, one draw each',
      { prompt, streamed: [40, 41], maxTokens: 8, failovers: 0 },
      2,
      { kind: 'continue', tokens: [1, 2, 3, 40, 41], drawOffset: 2, maxTokens: 6 },
    ],
    [
      'one token short of the budget',
      { prompt, streamed: [40, 41, 42], maxTokens: 4, failovers: 1 },
      2,
      { kind: 'continue', tokens: [1, 2, 3, 40, 41, 42], drawOffset: 3, maxTokens: 1 },
    ],
    [
      'the whole budget streamed: complete without a node',
      { prompt, streamed: [40, 41], maxTokens: 2, failovers: 0 },
      2,
      { kind: 'complete' },
    ],
    ['the last allowed failover used', { prompt, streamed: [40], maxTokens: 8, failovers: 2 }, 2, { kind: 'exhausted', failovers: 2 }],
    ['no failover allowed', { prompt, streamed: [], maxTokens: 8, failovers: 0 }, 0, { kind: 'exhausted', failovers: 0 }],
  ])('%s', (_name, s, max, plan) => {
    expect(planContinuation(s, max)).toEqual(plan);
  });

  it.each<[string, StreamSoFar, number]>([
    ['a negative limit', { prompt, streamed: [], maxTokens: 8, failovers: 0 }, -1],
    ['a fractional limit', { prompt, streamed: [], maxTokens: 8, failovers: 0 }, 1.5],
    ['no budget', { prompt, streamed: [], maxTokens: 0, failovers: 0 }, 1],
    ['no prompt', { prompt: [], streamed: [], maxTokens: 8, failovers: 0 }, 1],
    ['more streamed than the budget', { prompt, streamed: [1, 2, 3], maxTokens: 2, failovers: 0 }, 1],
  ])('refuses %s (a broken invariant)', (_name, s, max) => {
    expect(() => planContinuation(s, max)).toThrow(RangeError);
  });
});

describe(seedPromptLength.name, () => {
  it.each<[string, number, number, number | null]>([
    ['an ordinary request', 10, 0, 10],
    ['a continuation', 10, 4, 6],
    ['all but one token streamed', 10, 9, 1],
    ['no prompt token left', 10, 10, null],
    ['more draws than tokens', 10, 11, null],
    ['a negative offset', 10, -1, null],
    ['a fractional offset', 10, 1.5, null],
  ])('%s', (_name, tokens, offset, length) => {
    expect(seedPromptLength(tokens, offset)).toBe(length);
  });
});

describe(continuedUsage.name, () => {
  it.each<[string, Parameters<typeof continuedUsage>, ReturnType<typeof continuedUsage>]>([
    [
      'the original prompt, every completion token, the first attempt’s cache hits',
      [100, 7, { promptTokens: 107, completionTokens: 5, cachedTokens: 96 }, 32],
      { promptTokens: 100, completionTokens: 12, cachedTokens: 32 },
    ],
    [
      'no first report: the continuation’s hits, capped at the prompt',
      [100, 7, { promptTokens: 107, completionTokens: 5, cachedTokens: 104 }, undefined],
      { promptTokens: 100, completionTokens: 12, cachedTokens: 100 },
    ],
    [
      'a first report of none stays none',
      [100, 0, { promptTokens: 100, completionTokens: 3, cachedTokens: 64 }, 0],
      { promptTokens: 100, completionTokens: 3, cachedTokens: 0 },
    ],
  ])('%s', (_name, args, usage) => {
    expect(continuedUsage(...args)).toEqual(usage);
  });
});
