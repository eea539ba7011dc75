import { CHUNK_TOKENS, ErrorCode, KvBlockLedger, MnemoError } from '@mnemo/kv-core';
import type { EngineChunkEvent, KvBudget, PrefillInput, ServedModel, TokenOutput } from '../engine.interface.js';
import type { SimTokenStream } from './sim-token.stream.js';
import { chunkPayload, modelSeed, type SimKvLayout } from './sim-kv.content.js';

export interface SimSeq {
  readonly model: ServedModel;
  readonly ledger: KvBlockLedger;
  readonly stream: SimTokenStream;
  readonly salt?: string;
  /** Token ids in the modelled KV, in order (what resume recomputes). */
  readonly kvTokens: number[];
  /** Last sampled token, not yet in the KV: the next decode's input. */
  pending: number;
  preempted: boolean;
}

/**
 * The sim engine's modelled device KV: its sequences on one block ledger per model, and the
 * queries, exports and preemption that touch only that bookkeeping (no modelled time). A base
 * class rather than a member so that these stay SimEngine's own methods for its callers;
 * SimEngine builds the ledgers and adds the timed steps (prefill, decode, resume) on top.
 */
export abstract class SimKvLedgers {
  protected readonly seqs = new Map<string, SimSeq>();
  protected readonly ledgers = new Map<string, KvBlockLedger>();
  protected readonly chunkListeners = new Set<(e: EngineChunkEvent) => void>();
  protected readonly kvLayouts = new Map<string, SimKvLayout>();

  /** Sequences currently held (prefilled and not released). */
  get activeSequences(): number {
    return this.seqs.size;
  }

  /** Blocks held by live sequences over all models' modelled capacity. */
  kvUsage(): number {
    let used = 0;
    let capacity = 0;
    for (const l of this.ledgers.values()) {
      used += l.blocks.numActive;
      capacity += l.blocks.capacity;
    }
    return capacity === 0 ? 0 : used / capacity;
  }

  kvBudget(model: string): KvBudget {
    const b = this.ledger(model).blocks;
    return { capacity: b.capacity, available: b.numAvailable };
  }

  cachedTokens(input: PrefillInput): number {
    return input.cacheSalt === undefined ? 0 : this.ledger(input.model).cachedPrefix(input.cacheSalt, input.tokens);
  }

  prefillBlocks(input: PrefillInput): number {
    return this.ledger(input.model).prefixCost(input.cacheSalt, input.tokens).blocks;
  }

  decodeBlocks(seqIds: readonly string[]): number {
    return seqIds.reduce((n, id) => n + this.seq(id).ledger.blocksNeeded([{ seqId: id, tokens: 1 }]), 0);
  }

  exclusiveBlocks(seqId: string): number {
    const { ledger } = this.seq(seqId);
    return ledger.blockIds(seqId).filter((b) => ledger.blocks.refCount(b) === 1).length;
  }

  watchChunks(listener: (e: EngineChunkEvent) => void): () => void {
    this.chunkListeners.add(listener);
    return () => this.chunkListeners.delete(listener);
  }

  /**
   * With `kvBytes`, the chunk's KV regenerated from the sequence's tokens (the sim keeps no device
   * bytes; the copy handed out is real and is what the tiers and peers move). Undefined without
   * `kvBytes`, or when the sequence's KV does not cover the chunk.
   */
  exportChunk(seqId: string, chunk: number, tokens = CHUNK_TOKENS, into?: Float32Array): Float32Array | undefined {
    const seq = this.seqs.get(seqId);
    const layout = seq && this.kvLayouts.get(seq.model.id);
    if (!seq || !layout || !Number.isInteger(chunk) || chunk < 0 || chunk * CHUNK_TOKENS + tokens > seq.kvTokens.length) return undefined;
    const payload = chunkPayload(modelSeed(seq.model.id), seq.kvTokens, chunk, layout, tokens);
    if (!into) return payload;
    if (into.length !== payload.length)
      throw new MnemoError(ErrorCode.InvalidRequest, `chunk payload target has ${into.length} floats, a chunk needs ${payload.length}`);
    into.set(payload);
    return into;
  }

  kvLayout(model: string): SimKvLayout | undefined {
    return this.kvLayouts.get(model);
  }

  /** Not serialised with steps: the node-manager preempts between iterations, never inside one. */
  preempt(seqId: string): void {
    const seq = this.seq(seqId);
    if (seq.preempted) return;
    seq.ledger.release(seqId);
    seq.ledger.open(seqId, seq.salt);
    seq.preempted = true;
  }

  resumeBlocks(seqId: string): number {
    const seq = this.seq(seqId);
    return seq.preempted ? seq.ledger.prefixCost(seq.salt, seq.kvTokens).blocks : 0;
  }

  release(seqId: string): void {
    const seq = this.seqs.get(seqId);
    if (!seq) return;
    seq.ledger.release(seqId);
    this.seqs.delete(seqId);
  }

  /**
   * Appends token ids to sequences' modelled KV, all or nothing like the reference engine:
   * Overloaded when the available blocks do not cover the batch.
   */
  protected appendAll(items: ReadonlyArray<{ seqId: string; ids: readonly number[] }>, commit = true): void {
    const byLedger = new Map<KvBlockLedger, Array<{ seqId: string; tokens: number; ids: readonly number[] }>>();
    for (const it of items) {
      const { ledger } = this.seqs.get(it.seqId)!;
      byLedger.set(ledger, [...(byLedger.get(ledger) ?? []), { seqId: it.seqId, tokens: it.ids.length, ids: it.ids }]);
    }
    for (const [ledger, group] of byLedger) {
      if (ledger.blocksNeeded(group) > ledger.blocks.numAvailable) {
        throw new MnemoError(
          ErrorCode.Overloaded,
          `KV cache full: need ${ledger.blocksNeeded(group)} blocks, ${ledger.blocks.numAvailable} available`,
        );
      }
    }
    for (const [ledger, group] of byLedger) {
      ledger.append(group);
      // Tokens first: a chunk listener may export the chunk the commit names.
      for (const g of group) this.seqs.get(g.seqId)!.kvTokens.push(...g.ids);
      if (commit) ledger.commit(group.map((g) => g.seqId));
    }
  }

  /** One token per still-held sequence: the input of its next decode. */
  protected sample(ids: readonly string[]): TokenOutput[] {
    const out: TokenOutput[] = [];
    for (const seqId of ids) {
      const seq = this.seqs.get(seqId);
      if (!seq) continue;
      seq.pending = seq.stream.next();
      out.push({ seqId, token: seq.pending });
    }
    return out;
  }

  protected ledger(model: string): KvBlockLedger {
    const l = this.ledgers.get(model);
    if (!l) throw new MnemoError(ErrorCode.ModelNotFound, `model ${model} is not served by this engine`);
    return l;
  }

  protected seq(seqId: string): SimSeq {
    const s = this.seqs.get(seqId);
    if (!s) throw new MnemoError(ErrorCode.NotFound, `unknown sequence ${seqId}`);
    return s;
  }
}
