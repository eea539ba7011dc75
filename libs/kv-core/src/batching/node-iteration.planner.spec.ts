import { FairPriorityRanker } from '../priority/fair-priority.ranker.js';
import {
  admissionComputeTokens,
  admissionKinds,
  nodeIterationInput,
  planNodeIteration,
  queuedPrefill,
  resumeComputeTokens,
  tickRanker,
  type AdmissionView,
  type NodeKvView,
  type NodeSeq,
} from './node-iteration.planner.js';

let arrival = 0;
const seq = (id: string, over: Partial<NodeSeq> = {}): NodeSeq => ({
  id,
  pool: 'm',
  priority: 0,
  arrivalSeq: arrival++,
  phase: 'waiting',
  paused: false,
  streamed: false,
  preempted: false,
  swapped: false,
  promptTokens: 100,
  ...over,
});

/**
 * Every running sequence decodes into 1 block and frees 4; a resume takes 3; a fresh prompt takes 7 blocks, 32 of its tokens on the device,
 * restorable up to 64.
 */
function view(over: Partial<AdmissionView> = {}): NodeKvView & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    decodeBlocks: () => 1,
    exclusiveBlocks: () => 4,
    resumeBlocks: () => 3,
    admission: (id) => {
      asked.push(id);
      return { blocks: 7, sharing: true, deviceTokens: 32, restorableUntil: (d) => Math.max(d, 64), ...over };
    },
  };
}

describe(nodeIterationInput.name, () => {
  const opts = { maxBatch: 2, maxPrefillTokens: 512, kvAvailable: { m: 100 } };

  it.each([
    [true, true],
    [false, undefined],
  ])('holdLongPrompts %s reaches the plan as %s', (hold, planned) => {
    const sut = nodeIterationInput([seq('w')], view(), { ...opts, holdLongPrompts: hold });
    expect(sut.holdLongPrompts).toBe(planned);
  });

  it('gives running sequences their next decode and what preempting them frees', () => {
    const sut = nodeIterationInput([seq('r', { phase: 'running' })], view(), opts);
    expect(sut.running).toEqual([expect.objectContaining({ id: 'r', pool: 'm', blocks: 1, freeable: 4 })]);
  });

  it.each<[string, Partial<NodeSeq>, Partial<AdmissionView>, number, number]>([
    ['fresh: the prompt past what the tiers restore', {}, {}, 100 - 64, 7],
    ['fresh without sharing: the whole prompt', {}, { sharing: false }, 100, 7],
    ['fresh, device only: the prompt past the device', {}, { restorableUntil: (d) => d }, 100 - 32, 7],
    ['recompute resume: its blocks of history', { preempted: true }, {}, 3 * 16, 3],
    ['swap-in resume: no compute', { preempted: true, swapped: true }, {}, 0, 3],
  ])('%s', (_name, over, admission, promptTokens, blocks) => {
    const sut = nodeIterationInput([seq('w', over)], view(admission), opts);
    expect(sut.waiting).toEqual([expect.objectContaining({ id: 'w', promptTokens, blocks, pool: 'm' })]);
  });

  it('asks what admission costs only of the best maxBatch waiting', () => {
    const kv = view();
    const sut = nodeIterationInput([seq('a'), seq('b'), seq('vip', { priority: 5 })], kv, opts);
    expect(sut.waiting.map((s) => s.id)).toEqual(['vip', 'a']);
    expect(kv.asked.sort()).toEqual(['a', 'vip']);
  });

  it.each<[string, NodeSeq[], string[], string[]]>([
    ['paused sequences are left out', [seq('p', { paused: true }), seq('q', { paused: true, phase: 'running' })], [], []],
    ['swapping sequences are left out', [seq('s', { phase: 'swapping' })], [], []],
    ['streamed sequences run beside the plan', [seq('s', { phase: 'running', streamed: true })], [], []],
    [
      'a waiting streamed sequence is not overtaken in its model',
      [seq('early'), seq('stream', { streamed: true }), seq('late'), seq('other', { pool: 'x' })],
      [],
      ['early', 'other'],
    ],
  ])('%s', (_name, seqs, running, waiting) => {
    const sut = nodeIterationInput(seqs, view(), { ...opts, maxBatch: 8 });
    expect(sut.running.map((s) => s.id)).toEqual(running);
    expect(sut.waiting.map((s) => s.id)).toEqual(waiting);
  });

  it('ranks by the ranker under priority scheduling', () => {
    const ranker = new FairPriorityRanker({ updateEvery: 1, agingIterations: 1, tokensPerLevel: Infinity });
    const older = seq('older');
    const vip = seq('vip', { priority: 1 });
    // 'older' waits two iterations: it gains two levels and overtakes 'vip'.
    for (let i = 0; i < 2; i++) tickRanker(ranker, { prefill: [], decode: [], preempt: [] }, [], [older, { ...vip, phase: 'swapping' }]);
    const sut = nodeIterationInput([vip, older], view(), { ...opts, ranker });
    expect(sut.waiting.map((s) => [s.id, s.priority])).toEqual([
      ['older', 2],
      ['vip', 1],
    ]);
  });
});

describe(planNodeIteration.name, () => {
  it.each([
    // Priority scheduling preempts the running low-priority sequence for the waiting high-priority one; FCFS does not.
    [false, { prefill: [], decode: ['lo'], preempt: [] }],
    [true, { prefill: ['hi'], decode: [], preempt: ['lo'] }],
  ])('priority %s', (priority, plan) => {
    const input = {
      running: [{ id: 'lo', promptTokens: 1, priority: 0, arrivalSeq: 0, pool: 'm', blocks: 1, freeable: 5 }],
      waiting: [{ id: 'hi', promptTokens: 1, priority: 9, arrivalSeq: 1, pool: 'm', blocks: 5 }],
      maxBatch: 1,
      maxPrefillTokens: 100,
      kvAvailable: { m: 1 },
    };
    expect(planNodeIteration(input, priority)).toEqual(plan);
  });
});

describe(admissionKinds.name, () => {
  it('splits admitted sequences by how they start', () => {
    const fresh = { id: 'f', preempted: false, swapped: false };
    const swapped = { id: 's', preempted: true, swapped: true };
    const dropped = { id: 'd', preempted: true, swapped: false };
    expect(admissionKinds([fresh, swapped, dropped])).toEqual({ fresh: [fresh], swappedIn: [swapped], recomputed: [dropped] });
  });
});

describe('compute of an admission', () => {
  it.each<[string, number, AdmissionView, number]>([
    ['nothing held', 300, { blocks: 0, sharing: true, deviceTokens: 0, restorableUntil: (d) => d }, 300],
    ['device and tiers', 300, { blocks: 0, sharing: true, deviceTokens: 16, restorableUntil: () => 256 }, 44],
    ['not sharing', 300, { blocks: 0, sharing: false, deviceTokens: 16, restorableUntil: () => 256 }, 300],
  ])('%s', (_name, prompt, a, want) => {
    expect(admissionComputeTokens(prompt, a)).toBe(want);
  });

  it.each([
    [true, 4, 0],
    [false, 4, 64],
  ])('resume swapped %s of %i blocks computes %i tokens', (swapped, blocks, want) => {
    expect(resumeComputeTokens(swapped, blocks)).toBe(want);
  });
});

describe(queuedPrefill.name, () => {
  // view(): a fresh prompt of 100 tokens has 64 restorable; a recompute resume is 3 blocks of 16.
  it.each<[string, Partial<NodeSeq>, Partial<AdmissionView>, { promptTokens: number; cachedTokens: number }[]]>([
    ['a new request: its prompt and what the device and tiers supply', {}, {}, [{ promptTokens: 100, cachedTokens: 64 }]],
    ['a new request without sharing: all of it computes', {}, { sharing: false }, [{ promptTokens: 100, cachedTokens: 0 }]],
    ['preempted by recompute: its history from scratch', { preempted: true }, {}, [{ promptTokens: 48, cachedTokens: 0 }]],
    ['swapped out: a copy, no prefill', { preempted: true, swapped: true }, {}, []],
    ['running: not queued', { phase: 'running' }, {}, []],
    ['swapping in: not queued', { phase: 'swapping' }, {}, []],
    ['paused: out of the plan', { paused: true }, {}, []],
    ['streamed: beside the plan', { streamed: true }, {}, []],
  ])('%s', (_name, over, admission, want) => {
    expect(queuedPrefill([seq('w', over)], view(admission))).toEqual(want);
  });

  it('lists every waiting sequence, not only the ones a batch could take', () => {
    const seqs = Array.from({ length: 5 }, (_, i) => seq(`w${i}`));
    expect(queuedPrefill(seqs, view())).toHaveLength(5);
  });
});
