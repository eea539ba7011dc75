import { cpuBackend } from '../../test/test-backend.js';
import { syntheticWeightsFor } from '../weights/synthetic-weights.generator.js';
import { forwardStepShape, type ForwardStep } from './forward.step.js';
import { ReferenceEngine } from './reference.engine.js';

const GREEDY = { temperature: 0, topP: 1, seed: 0 };

describe(forwardStepShape.name, () => {
  it.each([
    // rows, contexts before, kind, tokens, attended, context
    { rows: [4], before: [0], kind: 'prefill', tokens: 4, attended: 6, context: 0 },
    { rows: [3], before: [10], kind: 'prefill', tokens: 3, attended: 33, context: 0 },
    { rows: [2, 1], before: [0, 5], kind: 'prefill', tokens: 3, attended: 1 + 5, context: 0 },
    { rows: [1, 1], before: [7, 9], kind: 'decode', tokens: 2, attended: 0, context: 8 + 10 },
  ])('$rows over $before: $kind of $tokens tokens', ({ rows, before, kind, tokens, attended, context }) => {
    expect(forwardStepShape(rows, before, 1.5)).toEqual({
      kind,
      seqs: rows.length,
      tokens,
      attendedTokens: attended,
      contextTokens: context,
      ms: 1.5,
    });
  });
});

describe('ReferenceEngine onStep', () => {
  it('reports each prefill and decode step with its shape and a compute time', async () => {
    const steps: ForwardStep[] = [];
    const sut = new ReferenceEngine(cpuBackend(), [syntheticWeightsFor('mnemo-tiny')], 64, { onStep: (s) => steps.push(s) });
    const tokens = Array.from({ length: 40 }, (_, i) => (i * 7 + 3) % 200);
    await sut.prefill([
      { seqId: 'a', model: 'mnemo-tiny', tokens, sampling: GREEDY },
      { seqId: 'b', model: 'mnemo-tiny', tokens: tokens.slice(0, 20), sampling: GREEDY },
    ]);
    await sut.decode(['a', 'b']);
    expect(steps.map(({ ms: _ms, ...shape }) => shape)).toEqual([
      { kind: 'prefill', seqs: 2, tokens: 60, attendedTokens: (40 * 39) / 2 + (20 * 19) / 2, contextTokens: 0 },
      { kind: 'decode', seqs: 2, tokens: 2, attendedTokens: 0, contextTokens: 41 + 21 },
    ]);
    for (const s of steps) expect(s.ms).toBeGreaterThan(0);
  });
});
