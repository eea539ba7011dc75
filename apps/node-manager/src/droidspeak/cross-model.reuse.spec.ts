// The node's wiring of the DroidSpeak plan choice: the request's wait since admission goes to
// kv-core's choosePlan with the node's load and budget, so a request that queued gets a cheaper
// plan where a fresh one would not. The policy itself is kv-core's (plan.chooser.spec.ts).
import { create } from '@bufbuild/protobuf';
import { choosePlan, chunkKeys, type PlanRequest, type ProfiledPattern } from '@mnemo/kv-core';
import type { ServedModel } from '@mnemo/engine';
import { InferenceRequestSchema } from '@mnemo/proto';
import { ManualClock, ServiceMetrics } from '@mnemo/service-kit';
import { Sequence } from '../shared/sequence.js';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import { CrossModelReuse, type CachedPlans } from './cross-model.reuse.js';
import { DroidSpeakMetrics } from './droidspeak.metrics.js';
import type { DroidSpeakSettings } from '../config/droidspeak.settings.js';

const BASE = 'base-8l';
const DERIVED = 'derived-8l';
const LAYERS = 8;
const TOKENS = Array.from({ length: 600 }, (_, i) => (i * 7 + 3) % 200);
const REACH = 512;

function pt(r2: number, quality: number, prefillMs: number, taskLoss: number): ProfiledPattern {
  return { pattern: { r1: 0, u1: 0, r2 }, quality, meanKl: 1 - quality, recomputedLayers: r2, eCacheBytesPerToken: 0, prefillMs, taskLoss };
}
// Cheapest first; within a 1% floor a fresh idle request with a 9 ms budget fits 0-0-6 (8 ms).
// Full reuse is far off on top-1 but within 1% on task loss.
const FRONTIER = [pt(0, 0.8, 1, 0.004), pt(2, 0.99, 3, 0.002), pt(6, 0.999, 8, 0.001), pt(LAYERS, 1, 10, 0)];

function node(opts: { latencyBudgetMs?: number; load?: number; task?: boolean } = {}) {
  const clock = new ManualClock(1_000);
  const asked: PlanRequest[] = [];
  const plans: CachedPlans = {
    cachedPlan: (_b, _d, req) => (asked.push(req), choosePlan(FRONTIER, req)),
    peek: () => ({ frontier: FRONTIER }),
  };
  // The base holds REACH positions of the prompt, the derived model none.
  const prompts: PromptStore = {
    restorableUntil: (p) => (p.model === BASE ? REACH : 0),
    restorePlan: (p) => (p.model === BASE ? { until: REACH, load: async () => new Float32Array(0) } : undefined),
  };
  const settings: DroidSpeakSettings = {
    enabled: true,
    maxQualityLoss: 0.01,
    planTimeoutMs: 100,
    eCaches: false,
    bases: new Map([[DERIVED, BASE]]),
    qualityMetrics: new Map(opts.task ? [[DERIVED, 'task' as const]] : []),
    ...(opts.latencyBudgetMs ? { latencyBudgetMs: opts.latencyBudgetMs } : {}),
  };
  const sut = new CrossModelReuse(
    settings,
    plans,
    prompts,
    () => LAYERS,
    () => opts.load ?? 0,
    clock,
    new DroidSpeakMetrics(new ServiceMetrics('cross-model-test')),
  );
  const model: ServedModel = { id: DERIVED, engine: 'reference', vocabSize: 256, maxContext: 4096, eosTokenId: 0 };
  const admit = (): Sequence => {
    const request = create(InferenceRequestSchema, {
      requestId: 'r1',
      tenant: 't',
      model: DERIVED,
      tokens: TOKENS,
      chunkKeys: chunkKeys(DERIVED, 't', TOKENS),
      replySubject: '_INBOX.x',
    });
    return new Sequence(request, model, 0, clock.monotonicMs());
  };
  return { sut, clock, asked, admit };
}

describe(CrossModelReuse.name, () => {
  const cases: Array<[string, { latencyBudgetMs?: number; load?: number }, number, number]> = [
    ['fresh and idle: the slack buys recomputation', { latencyBudgetMs: 9 }, 0, 6],
    ['waited 1 ms: 1 + 8 still within 9', { latencyBudgetMs: 9 }, 1, 6],
    ['waited 3 ms: 3 + 8 misses 9, the cheaper plan', { latencyBudgetMs: 9 }, 3, 2],
    ['fresh but loaded: the cheaper plan, as before', { latencyBudgetMs: 9, load: 1 }, 0, 2],
    ['no budget: the cheapest within the floor whatever the wait', {}, 500, 2],
  ];
  it.each(cases)('%s', (_name, opts, waitMs, recomputed) => {
    const { sut, clock, asked, admit } = node(opts);
    const seq = admit();
    clock.mono += waitMs;
    const plan = sut.crossModelFor(seq)!(0);
    expect(plan?.baseModel).toBe(BASE);
    expect(plan?.pattern).toEqual({ r1: 0, u1: 0, r2: recomputed });
    expect(plan?.until).toBe(REACH);
    expect(asked.at(-1)?.waitedMs).toBe(waitMs);
  });

  it('a pair set to the task metric gets plans held to it; the others keep top-1', () => {
    const task = node({ task: true });
    expect(task.sut.crossModelFor(task.admit())!(0)?.pattern.r2).toBe(0);
    expect(task.asked.at(-1)?.qualityMetric).toBe('task');
    const top1 = node();
    expect(top1.sut.crossModelFor(top1.admit())!(0)?.pattern.r2).toBe(2);
    expect(top1.asked.at(-1)?.qualityMetric).toBe('top1');
  });

  it('a request that waited gets the cheaper plan where a fresh one, asked at the same moment, does not', () => {
    const { sut, clock, admit } = node({ latencyBudgetMs: 9 });
    const early = admit();
    clock.mono += 5;
    const fresh = admit();
    expect(sut.crossModelFor(early)!(0)?.pattern.r2).toBe(2);
    expect(sut.crossModelFor(fresh)!(0)?.pattern.r2).toBe(6);
  });
});
