import { ErrorCode, isMnemoError } from '@mnemo/kv-core';
import type { KvRestorePlan } from '../engine.interface.js';
import type { PagedKvCache } from './paged-kv.cache.js';

/** A sequence's restore in one prefill pass: its plan, and the first position the plan fills. */
export interface PlannedRestore {
  readonly plan: KvRestorePlan;
  readonly from: number;
}

/**
 * What a restoring pass needs of the engine's sequences. Kept this small so the restore steps
 * are plain functions: the pass itself (the forward step) stays the engine's.
 */
export interface RestoringSequences {
  /** Whether the sequence is still held: a cancelled request's is not. */
  has(seqId: string): boolean;
  /** The paged cache of the sequence's model. */
  cache(seqId: string): PagedKvCache<unknown>;
  /** Drops a sequence whose restore failed (its request then gets no output). */
  release(seqId: string): void;
}

/**
 * One layer of every restoring sequence's planned KV, imported as soon as it arrives. A load
 * that fails with DataLoss drops its sequence only (released, in `failed`): the pass goes on for
 * the others, and the released sequence's rows are never committed (see ModelRuntime.step).
 */
export async function restoreLayer(
  seqs: RestoringSequences,
  seqIds: readonly string[],
  plans: ReadonlyMap<string, PlannedRestore>,
  slots: Map<string, Int32Array>,
  layer: number,
  failed: Set<string>,
): Promise<void> {
  const one = async (seqId: string): Promise<void> => {
    try {
      await restoreOne(seqs, seqId, plans, slots, layer);
    } catch (e) {
      if (!isMnemoError(e) || e.code !== ErrorCode.DataLoss) throw e;
      failed.add(seqId);
      seqs.release(seqId);
    }
  };
  await Promise.all(seqIds.map(one));
}

async function restoreOne(
  seqs: RestoringSequences,
  seqId: string,
  plans: ReadonlyMap<string, PlannedRestore>,
  slots: Map<string, Int32Array>,
  layer: number,
): Promise<void> {
  const { plan, from } = plans.get(seqId)!;
  // Released meanwhile: its blocks go back once the pass ends; nothing to write.
  if (!seqs.has(seqId)) return;
  const cache = seqs.cache(seqId);
  // Looked up once per pass, not once per layer: the pass holds the sequence's blocks (a
  // sequence cancelled meanwhile keeps them until the pass ends, so writing them is harmless).
  let at = slots.get(seqId);
  if (!at) slots.set(seqId, (at = cache.slots(seqId, from, plan.until)));
  // Host-resident cache (CPU): the plan copies the layer's rows into their slots itself,
  // on its copy threads — no payload, and no second pass over the bytes on this thread.
  const target = plan.loadInto ? cache.hostTarget(at, layer) : undefined;
  if (target) return plan.loadInto!(layer, target);
  const data = await plan.load(layer);
  // Cancelled meanwhile: its blocks go back once the pass ends; nothing to write.
  if (!seqs.has(seqId)) return;
  cache.import(seqId, { layerStart: layer, layerEnd: layer + 1, tokenStart: from, tokenEnd: plan.until }, data, at);
}
