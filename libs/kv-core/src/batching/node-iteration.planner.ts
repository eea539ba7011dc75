import type { FairPriorityRanker } from '../priority/fair-priority.ranker.js';
import { planPriorityIteration } from '../priority/priority.planner.js';
import { BLOCK_TOKENS } from '../keys/chunk.constants.js';
import { compareSeqs, planIteration } from './iteration.planner.js';
import type { IterationInput, IterationPlan, SeqState } from './seq-state.js';

/** One sequence held by a node, as its iteration policy sees it. */
export interface NodeSeq {
  readonly id: string;
  /** The KV pool its blocks come from: its model. */
  readonly pool: string;
  /** API priority (the ranker tempers it under priority scheduling). */
  readonly priority: number;
  readonly arrivalSeq: number;
  /** `swapping`: an asynchronous swap-in is copying its KV back; out of planning until it settles. */
  readonly phase: 'waiting' | 'running' | 'swapping';
  /** Left out of iterations (its client reads slowly); its KV stays allocated. */
  readonly paused: boolean;
  /** Runs through the layer stream (context beyond the device cache), beside the planned batch. */
  readonly streamed: boolean;
  /** Waiting after its device KV was dropped or swapped out: admission resumes it. */
  readonly preempted: boolean;
  /** Preempted by swap-out: its KV waits in host memory, so coming back copies and computes nothing. */
  readonly swapped: boolean;
  /** Tokens in its prompt. */
  readonly promptTokens: number;
}

/** What admitting a new (never prefilled) request takes, asked only of the waiting sequences the batch could take. */
export interface AdmissionView {
  /** Device blocks its prefill takes (new blocks plus unheld cached hits). */
  readonly blocks: number;
  /** Whether it shares prefixes (a tenant salt and the prefix cache on): only then can the device or the tiers supply any of it. */
  readonly sharing: boolean;
  /** Prompt tokens the device prefix cache holds now. */
  readonly deviceTokens: number;
  /** Prompt position up to which the offload tiers (or peers) can restore past `deviceTokens` (at least `deviceTokens`). */
  restorableUntil(deviceTokens: number): number;
}

/** The node's engine and KV store, asked per sequence while the input is assembled. */
export interface NodeKvView {
  /** Blocks one decode step of this running sequence takes. */
  decodeBlocks(id: string): number;
  /** Blocks only this running sequence holds: what preempting it frees at least. */
  exclusiveBlocks(id: string): number;
  /** Blocks bringing this preempted sequence back takes. */
  resumeBlocks(id: string): number;
  admission(id: string): AdmissionView;
}

export interface NodeIterationOptions {
  readonly maxBatch: number;
  readonly maxPrefillTokens: number;
  /** Device blocks each pool (model) can hand out now. */
  readonly kvAvailable: Readonly<Record<string, number>>;
  /** Priority scheduling (FastSwitch): effective ranks; absent under FCFS. */
  readonly ranker?: FairPriorityRanker;
  /** FCFS only: a long prompt leads the next pass instead of holding this pass's shorter ones (IterationInput.holdLongPrompts). */
  readonly holdLongPrompts?: boolean;
}

/**
 * Prompt tokens admitting a new request computes: its prompt past what the device or the tiers
 * can supply. Whatever they hold costs blocks, not compute.
 */
export function admissionComputeTokens(promptTokens: number, a: AdmissionView): number {
  if (!a.sharing) return promptTokens;
  return promptTokens - a.restorableUntil(a.deviceTokens);
}

/**
 * Tokens bringing a preempted sequence back computes: none for a swap-in (it copies, it computes
 * nothing, so it takes no prefill budget), its whole history (its blocks' worth) for a recompute.
 */
export function resumeComputeTokens(swapped: boolean, resumeBlocks: number): number {
  return swapped ? 0 : resumeBlocks * BLOCK_TOKENS;
}

/** A waiting sequence's prefill as the node would run it now: its prompt and what it would not compute. */
export interface QueuedPrefill {
  readonly promptTokens: number;
  readonly cachedTokens: number;
}

/**
 * The prefill the node's waiting sequences still need, for the heartbeat (NodeCostMeters
 * .prefillBusyMs): each new request's prompt past what the device and the tiers can supply, and
 * each recompute-preempted sequence's whole history. Swapped-out sequences copy back and compute
 * nothing; paused, streamed and swapping ones are out of the plan.
 *
 * The scheduler's backlog prices a dispatch's prefill from the moment it is sent, draining in real
 * time, and counts the request as one waiting there; but a waiting prompt that does not fit the
 * device's free blocks holds the head of the queue (admission never lets later ones overtake it)
 * and has not started when that backlog has drained. In the twin's 1,024-user run a 45,777-token
 * turn waited on a node whose KV was 94 % full, behind other long passes, for half a minute; for
 * the last 3.6 s the node ran no prefill and reported two waiting, short turns routed there were
 * priced at ~100 ms of queue, and they had their first tokens 9–10 s later with it.
 */
export function queuedPrefill(seqs: Iterable<NodeSeq>, kv: NodeKvView): QueuedPrefill[] {
  const out: QueuedPrefill[] = [];
  for (const s of seqs) {
    if (s.phase !== 'waiting' || s.paused || s.streamed) continue;
    if (s.preempted) {
      const tokens = resumeComputeTokens(s.swapped, kv.resumeBlocks(s.id));
      if (tokens > 0) out.push({ promptTokens: tokens, cachedTokens: 0 });
      continue;
    }
    const a = kv.admission(s.id);
    out.push({ promptTokens: s.promptTokens, cachedTokens: s.promptTokens - admissionComputeTokens(s.promptTokens, a) });
  }
  return out;
}

/**
 * The planner's view of one iteration on a node: running sequences with the blocks their next
 * decode takes and what preempting each frees; the waiting ones the batch could take (at most
 * maxBatch, best first) with what they compute; each pool's free blocks. Streamed sequences run
 * beside the plan, and a streamed sequence waiting for its memory is not overtaken by later
 * requests of its model. Paused and swapping sequences are left out.
 */
export function nodeIterationInput(seqs: Iterable<NodeSeq>, kv: NodeKvView, o: NodeIterationOptions): IterationInput {
  const rank = (s: NodeSeq): number => (o.ranker ? o.ranker.rank(s.id, s.priority) : s.priority);
  let streamHead: Map<string, number> | undefined;
  const running: SeqState[] = [];
  const candidates: NodeSeq[] = [];
  for (const s of seqs) {
    if (s.paused) continue;
    if (s.phase === 'running' && !s.streamed) {
      running.push({
        id: s.id,
        promptTokens: s.promptTokens,
        priority: rank(s),
        arrivalSeq: s.arrivalSeq,
        pool: s.pool,
        blocks: kv.decodeBlocks(s.id),
        freeable: kv.exclusiveBlocks(s.id),
      });
    } else if (s.phase === 'waiting') {
      if (!s.streamed) candidates.push(s);
      else {
        streamHead ??= new Map();
        streamHead.set(s.pool, Math.min(streamHead.get(s.pool) ?? Infinity, s.arrivalSeq));
      }
    }
  }
  const byId = new Map<string, NodeSeq>();
  const waiting: SeqState[] = [];
  for (const s of candidates) {
    if (streamHead && s.arrivalSeq >= (streamHead.get(s.pool) ?? Infinity)) continue;
    byId.set(s.id, s);
    waiting.push({ id: s.id, promptTokens: s.promptTokens, priority: rank(s), arrivalSeq: s.arrivalSeq });
  }
  waiting.sort(compareSeqs);
  if (waiting.length > o.maxBatch) waiting.length = o.maxBatch;
  for (let i = 0; i < waiting.length; i++) {
    const s = byId.get(waiting[i]!.id)!;
    if (s.preempted) {
      const blocks = kv.resumeBlocks(s.id);
      waiting[i] = { ...waiting[i]!, pool: s.pool, blocks, promptTokens: resumeComputeTokens(s.swapped, blocks) };
    } else {
      const a = kv.admission(s.id);
      waiting[i] = { ...waiting[i]!, pool: s.pool, blocks: a.blocks, promptTokens: admissionComputeTokens(s.promptTokens, a) };
    }
  }
  return {
    running,
    waiting,
    maxBatch: o.maxBatch,
    maxPrefillTokens: o.maxPrefillTokens,
    kvAvailable: o.kvAvailable,
    ...(o.holdLongPrompts ? { holdLongPrompts: true } : {}),
  };
}

/** The iteration plan: preemptive priority scheduling with a ranker, FCFS continuous batching without. */
export function planNodeIteration(
  input: IterationInput & { kvAvailable: Readonly<Record<string, number>> },
  priority: boolean,
): IterationPlan {
  return priority ? planPriorityIteration(input) : planIteration(input);
}

/** Admitted sequences by how they start: swapped back in (a copy), fresh (a prefill), or recomputed (a resume). */
export interface AdmissionKinds<S> {
  readonly swappedIn: S[];
  readonly fresh: S[];
  readonly recomputed: S[];
}

export function admissionKinds<S extends Pick<NodeSeq, 'preempted' | 'swapped'>>(admitted: readonly S[]): AdmissionKinds<S> {
  const out: AdmissionKinds<S> = { swappedIn: [], fresh: [], recomputed: [] };
  for (const s of admitted) (!s.preempted ? out.fresh : s.swapped ? out.swappedIn : out.recomputed).push(s);
  return out;
}

/**
 * Tells the ranker who was served this iteration (a decoded token each, a fresh prefill its
 * prompt) and who was left out (everything else held but swapping sequences, whose copy is
 * their turn).
 */
export function tickRanker(
  ranker: FairPriorityRanker,
  plan: IterationPlan,
  fresh: ReadonlyArray<{ readonly id: string; readonly promptTokens: number }>,
  held: Iterable<Pick<NodeSeq, 'id' | 'priority' | 'phase'>>,
): void {
  const served = new Map<string, number>();
  for (const id of plan.decode) served.set(id, 1);
  for (const s of fresh) served.set(s.id, s.promptTokens);
  const bases = new Map<string, number>();
  const left: string[] = [];
  for (const s of held) {
    bases.set(s.id, s.priority);
    if (!served.has(s.id) && s.phase !== 'swapping') left.push(s.id);
  }
  ranker.tick(served, left, bases);
}
