import { BlockKeyChain, KvBlockLedger, type AdmissionView, type DeviceChunkEvent, type NodeKvView, type StageRank } from '@mnemo/kv-core';
import type { TwinSeq } from './twin-seq.js';

/**
 * One model's device KV cache on a twin node, kept exactly as the sim engine keeps it: the
 * kv-core block ledger (prefix cache, LRU, staged chunks, block groups), sequences opened under
 * their tenant's salt, prefix hits attached at prefill, every appended token's blocks named once
 * its KV is written. Only the bytes are missing. Mirrors SimEngine's prefill / decode / preempt /
 * resume / release bookkeeping; the node prices the calls.
 */
export class TwinDevice implements NodeKvView {
  readonly ledger: KvBlockLedger;
  private readonly seqs = new Map<string, TwinSeq>();

  constructor(
    readonly model: string,
    blocks: number,
    onChunk: (e: DeviceChunkEvent) => void,
    options: { readonly prefixCacheBlocks?: number; readonly groupBlocks?: number; readonly prefixCache: boolean } = { prefixCache: true },
  ) {
    this.ledger = new KvBlockLedger(model, blocks, onChunk, options.groupBlocks ? { groupBlocks: options.groupBlocks } : undefined);
    if (options.prefixCacheBlocks !== undefined && Number.isFinite(options.prefixCacheBlocks))
      this.ledger.blocks.setMaxCached(options.prefixCacheBlocks);
    this.sharing = options.prefixCache;
  }

  /** Whether requests share prefixes (NODE_PREFIX_CACHE). */
  readonly sharing: boolean;

  salt(seq: TwinSeq): string | undefined {
    return this.sharing ? seq.request.tenant : undefined;
  }

  // ---- the iteration policy's questions (kv-core NodeKvView) --------------------------------

  decodeBlocks(id: string): number {
    return this.ledger.blocksNeeded([{ seqId: id, tokens: 1 }]);
  }

  exclusiveBlocks(id: string): number {
    const blocks = this.ledger.blocks;
    let n = 0;
    for (const b of this.ledger.blockIds(id)) if (blocks.refCount(b) === 1) n++;
    return n;
  }

  resumeBlocks(id: string): number {
    const seq = this.seqs.get(id)!;
    return seq.preempted ? this.ledger.prefixCost(this.salt(seq), seq.kvTokenIds()).blocks : 0;
  }

  /** Set per node: what the tiers and peers can restore past the device's prefix. */
  restorableUntil: (seq: TwinSeq, deviceTokens: number) => number = (_s, d) => d;

  /** The sequence to answer `admission` for (the node sets it before planning). */
  lookup: (id: string) => TwinSeq | undefined = () => undefined;

  admission(id: string): AdmissionView {
    const seq = this.lookup(id)!;
    const salt = this.salt(seq);
    const cost = this.ledger.prefixCost(salt, seq.request.tokens, this.keysOf(seq, salt));
    return {
      blocks: cost.blocks,
      sharing: salt !== undefined,
      deviceTokens: salt === undefined ? 0 : cost.cachedTokens,
      restorableUntil: (deviceTokens) => this.restorableUntil(seq, deviceTokens),
    };
  }

  get available(): number {
    return this.ledger.blocks.numAvailable;
  }

  get capacity(): number {
    return this.ledger.blocks.capacity;
  }

  /** Device KV held by sequences over capacity (the heartbeat's kv_usage). */
  usage(): number {
    return this.ledger.usage();
  }

  cachedTokens(seq: TwinSeq): number {
    const salt = this.salt(seq);
    return salt === undefined ? 0 : this.ledger.cachedPrefix(salt, seq.request.tokens, this.keysOf(seq, salt));
  }

  /** The prompt's block keys, kept per request so planning it again while it waits hashes nothing new. */
  private keysOf(seq: TwinSeq, salt: string | undefined): BlockKeyChain | undefined {
    if (salt === undefined) return undefined;
    return (seq.promptKeys ??= seq.request.keys?.chain ?? new BlockKeyChain(this.model, salt));
  }

  // ---- engine calls ----------------------------------------------------------------------------

  /** Opens a fresh sequence and attaches its cached prefix; returns the device hit in tokens. */
  admit(seq: TwinSeq): number {
    const salt = this.salt(seq);
    // The prompt's keys hashed while it waited become the sequence's own.
    this.ledger.open(seq.id, salt, salt === undefined ? undefined : this.keysOf(seq, salt));
    seq.promptKeys = undefined;
    this.seqs.set(seq.id, seq);
    seq.open = true;
    const hit = salt === undefined ? 0 : this.ledger.attachPrefix(seq.id, seq.request.tokens);
    seq.kvLength = hit;
    return hit;
  }

  /**
   * Appends the prompt past `from` to each sequence's KV, all or nothing (false when the blocks
   * do not fit: the plan missed). Commits now unless `commit` is false (a restoring pass names
   * its blocks once the restored bytes are in).
   */
  appendPrompts(seqs: readonly TwinSeq[], from: readonly number[], commit: boolean): boolean {
    const items = seqs.map((s, i) => ({ seqId: s.id, tokens: s.request.tokens.length - from[i]!, ids: s.request.tokens.slice(from[i]!) }));
    if (this.ledger.blocksNeeded(items) > this.ledger.blocks.numAvailable) return false;
    this.ledger.append(items);
    seqs.forEach((s, i) => {
      s.kvLength += items[i]!.tokens;
    });
    if (commit) this.ledger.commit(seqs.map((s) => s.id));
    return true;
  }

  commit(seqs: readonly TwinSeq[]): void {
    this.ledger.commit(seqs.map((s) => s.id));
  }

  /** One decode step's appends (each sequence's pending token), committed; false when the blocks do not fit. */
  appendDecode(seqs: readonly TwinSeq[]): boolean {
    let need = 0;
    for (const s of seqs) need += this.decodeBlocks(s.id);
    if (need > this.ledger.blocks.numAvailable) return false;
    // Every decode step of every sequence passes here: the append items and id list are reused.
    const items = this.decodeItems;
    const ids = this.decodeIds;
    items.length = 0;
    ids.length = 0;
    for (const s of seqs) {
      const item = (s.decodeItem ??= { seqId: s.id, tokens: 1, ids: [0] });
      item.ids[0] = s.pending;
      items.push(item);
      ids.push(s.id);
    }
    this.ledger.append(items);
    for (const s of seqs) s.kvLength++;
    this.ledger.commit(ids);
    return true;
  }

  private readonly decodeItems: Array<{ readonly seqId: string; readonly tokens: number; readonly ids: number[] }> = [];
  private readonly decodeIds: string[] = [];

  /** Recompute preemption: the device KV goes, the history stays for the resume. */
  preempt(seq: TwinSeq): void {
    this.ledger.release(seq.id);
    this.ledger.open(seq.id, this.salt(seq));
    seq.preempted = true;
  }

  /** Brings a recompute-preempted sequence back; returns the tokens it recomputes, or -1 when the blocks do not fit. */
  resume(seq: TwinSeq): number {
    const tokens = seq.kvTokenIds();
    const hit = this.salt(seq) === undefined ? 0 : this.ledger.attachPrefix(seq.id, tokens);
    const rest = tokens.slice(hit);
    if (this.ledger.blocksNeeded([{ seqId: seq.id, tokens: rest.length }]) > this.ledger.blocks.numAvailable) {
      this.ledger.release(seq.id);
      this.ledger.open(seq.id, this.salt(seq));
      return -1;
    }
    this.ledger.append([{ seqId: seq.id, tokens: rest.length, ids: rest }]);
    this.ledger.commit([seq.id]);
    seq.preempted = false;
    return rest.length;
  }

  release(seq: TwinSeq): void {
    if (!seq.open) return;
    seq.open = false;
    this.ledger.release(seq.id);
    this.seqs.delete(seq.id);
  }

  /** Places a prefetched chunk in free device blocks (promotion); false when it did not fit or is there. */
  stage(key: string, rank: StageRank): boolean {
    return this.ledger.stage(key, rank) !== null;
  }

  unstage(key: string): void {
    this.ledger.unstage(key);
  }
}
