import {
  nodeIterationInput,
  planNodeIteration,
  queuedPrefill,
  tickRanker,
  type FairPriorityRanker,
  type IterationPlan,
  type NodeKvView,
  type QueuedPrefill,
} from '@mnemo/kv-core';
import type { Engine, PrefillInput } from '@mnemo/engine';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import type { PromptStore } from '../kv-store/prompt-store.port.js';
import type { Sequence } from '../shared/sequence.js';
import { nodeSeq, storedPrompt } from './sequence.inputs.js';
import type { SequenceStore } from './sequence.store.js';

/** What the batch loop's planning reads: the engine's blocks, the sequences, the KV store's restores. */
export interface IterationSources {
  readonly engine: Engine;
  readonly store: SequenceStore;
  readonly kvStore: PromptStore;
  readonly config: NodeManagerConfig;
  readonly ranker?: FairPriorityRanker;
  isSwapped(seq: Sequence): boolean;
  /** The engine's input for a new request (what admission's block estimate prices). */
  prefillInput(seq: Sequence): PrefillInput;
}

/** The policy's view of one iteration (kv-core `nodeIterationInput`) and its plan (kv-core `planNodeIteration`). */
export function planIterationOf(s: IterationSources): IterationPlan {
  const kvAvailable: Record<string, number> = {};
  for (const m of s.engine.models()) kvAvailable[m.id] = s.engine.kvBudget(m.id).available;
  const input = nodeIterationInput(nodeSeqsOf(s), nodeKvViewOf(s), {
    maxBatch: s.config.NODE_MAX_BATCH!,
    maxPrefillTokens: s.config.NODE_MAX_PREFILL_TOKENS!,
    kvAvailable,
    ...(s.ranker ? { ranker: s.ranker } : {}),
    ...(s.config.NODE_HOLD_LONG_PROMPTS === 'on' ? { holdLongPrompts: true } : {}),
  });
  return planNodeIteration({ ...input, kvAvailable }, s.ranker !== undefined);
}

/** What the waiting sequences still have to prefill (kv-core `queuedPrefill`), for the heartbeat's prefill_busy_ms. */
export function queuedPrefillOf(s: IterationSources): QueuedPrefill[] {
  return queuedPrefill(nodeSeqsOf(s), nodeKvViewOf(s));
}

const nodeSeqsOf = (s: IterationSources) => s.store.all().map((q) => nodeSeq(q, s.isSwapped(q)));

function nodeKvViewOf(s: IterationSources): NodeKvView {
  return {
    decodeBlocks: (id) => s.engine.decodeBlocks([id]),
    exclusiveBlocks: (id) => s.engine.exclusiveBlocks(id),
    resumeBlocks: (id) => s.engine.resumeBlocks(id),
    admission: (id) => {
      const seq = s.store.get(id)!;
      const input = s.prefillInput(seq);
      return {
        blocks: s.engine.prefillBlocks(input),
        sharing: input.cacheSalt !== undefined,
        deviceTokens: input.cacheSalt === undefined ? 0 : s.engine.cachedTokens(input),
        restorableUntil: (deviceTokens) => s.kvStore.restorableUntil(storedPrompt(seq), deviceTokens),
      };
    },
  };
}

/** Priority scheduling: tells the ranker who was served this iteration and who was left out. */
export function rankIteration(ranker: FairPriorityRanker, plan: IterationPlan, fresh: readonly Sequence[], store: SequenceStore): void {
  tickRanker(
    ranker,
    plan,
    fresh.map((s) => ({ id: s.id, promptTokens: s.request.tokens.length })),
    store.all().map((s) => ({ id: s.id, priority: s.request.priority, phase: s.phase })),
  );
}
