import { BlockKeyChain } from '../keys/block-key.chain.js';
import { BLOCK_TOKENS, BLOCKS_PER_CHUNK } from '../keys/chunk.constants.js';
import { DeviceBlockManager, type BlockGroupOptions } from './device-block.manager.js';
import type { StageRank } from './staged-chunk.set.js';
import { SequenceBlockTable } from './sequence-block-table.js';

/** Tokens appended to one sequence; `ids` (the token ids) are required for sequences that share. */
export interface LedgerAppend {
  readonly seqId: string;
  readonly tokens: number;
  readonly ids?: readonly number[];
}

/**
 * Whole 256-token chunks entering and leaving the device: `written` when a sharing sequence
 * names the last block of a chunk (its key is the chunk key; its KV is complete on the device),
 * `evicted` when that block is reclaimed. The KV store offloads on the first and reports both.
 *
 * `partial` when a sharing sequence lets go of its blocks (it finished, or was preempted) while
 * its last chunk is incomplete: the first `tokens` positions of chunk `chunk` (whole blocks) are
 * named `key` — the block key of its last full block — and still readable until the listener
 * returns. A conversation's next turn repeats them, so the store keeps them too. `superseded`
 * (on both `written` and `partial`) are the keys of shorter prefixes of the same chunk, which
 * this one covers.
 */
export type DeviceChunkEvent =
  | ({
      readonly kind: 'written';
      readonly key: string;
      readonly seqId: string;
      readonly chunk: number;
      readonly superseded: readonly string[];
    } & ChunkContent)
  | ({
      readonly kind: 'partial';
      readonly key: string;
      readonly seqId: string;
      readonly chunk: number;
      readonly tokens: number;
      readonly superseded: readonly string[];
    } & ChunkContent)
  | { readonly kind: 'evicted'; readonly key: string };

/**
 * What a written or partial chunk holds, for consumers that describe it block by block (vLLM-format
 * KV events): the token ids of its named blocks (tokens [256·chunk, 256·chunk + 16·n)) and the key
 * of the chunk before it (null for the first). Its block keys are `[...superseded, key]`.
 */
export interface ChunkContent {
  readonly ids?: readonly number[];
  readonly parentKey?: string | null;
}

/** Prefetched chunks placed on the device ahead of their request, since start. */
export interface StagingCounters {
  staged: number;
  /** Taken over by a sequence whose prompt reached them. */
  adopted: number;
  /** Reclaimed for a sequence's blocks before any request used them (cooperative purge). */
  purged: number;
  /** Dropped because their advisory was withdrawn. */
  unstaged: number;
}

/** A staged chunk a prompt reaches: its key, and the blocks [from, to) of it the prompt takes (the device held those before `from`). */
interface StagedHit {
  readonly key: string;
  readonly from: number;
  readonly to: number;
}

interface LedgerSeq {
  readonly table: SequenceBlockTable;
  /** Present for sequences that take part in prefix sharing. */
  readonly chain?: BlockKeyChain;
  /** Token ids whose KV the table covers, in order (sharing sequences only). */
  readonly ids: number[];
  /** Leading blocks already named at the block manager. */
  committed: number;
}

/**
 * The block tables of one model's sequences over its {@link DeviceBlockManager}, with automatic
 * prefix sharing: a sequence opened with a tenant salt names each full block it writes
 * ({@link commit}, block keys consistent with chunk keys) and may start from the longest cached
 * prefix of its prompt ({@link attachPrefix}). A sequence opened without one (e.g. KV imported
 * from another model) neither names nor matches blocks, so approximate KV never enters the cache.
 *
 * Blocks are named only after their KV has been written (callers commit after a pass), so a
 * match never returns a block still being computed. Shared blocks are always full: appends write
 * only past a sequence's own length, never into a shared block.
 */
export class KvBlockLedger {
  readonly blocks: DeviceBlockManager;
  private readonly seqs = new Map<string, LedgerSeq>();
  /** Keys of the chunk-closing blocks on the device (a chunk is resident while its last block is). */
  private readonly chunks = new Set<string>();
  readonly staging: StagingCounters = { staged: 0, adopted: 0, purged: 0, unstaged: 0 };

  constructor(
    readonly modelId: string,
    capacity: number,
    private readonly onChunk?: (e: DeviceChunkEvent) => void,
    grouping?: BlockGroupOptions,
  ) {
    this.blocks = new DeviceBlockManager(
      capacity,
      (key) => {
        if (this.chunks.delete(key)) this.onChunk?.({ kind: 'evicted', key });
      },
      grouping,
      () => this.staging.purged++,
    );
  }

  /**
   * Places prefetched chunk `key` (a chunk key: its last block's key) on the device ahead of the
   * request that will use it (Symphony: promotion while device memory is free): the blocks to
   * write its KV into, all layers, before anything else allocates; a sharing sequence whose
   * prompt reaches that key takes them over in {@link attachPrefix}. Null when the device holds
   * the chunk already or lacks the free blocks (see {@link DeviceBlockManager.stage}).
   */
  stage(key: string, rank: StageRank): number[] | null {
    const ids = this.blocks.stage(key, BLOCKS_PER_CHUNK, rank);
    if (ids) this.staging.staged++;
    return ids;
  }

  /** Drops a staged chunk nobody took (its advisory was withdrawn); false when it is not staged. */
  unstage(key: string): boolean {
    const ok = this.blocks.unstage(key);
    if (ok) this.staging.unstaged++;
    return ok;
  }

  /** Whether the device holds the whole chunk named `key` (its closing block; earlier ones go later). */
  holdsChunk(key: string): boolean {
    return this.chunks.has(key);
  }

  has(seqId: string): boolean {
    return this.seqs.has(seqId);
  }

  /**
   * Registers an empty sequence; with a `salt` (the tenant's) it shares prefixes under that salt.
   * `keys`, block keys the caller already computed over the tokens the sequence will hold (its
   * prompt), are taken over rather than hashed again; the sequence owns them from now on.
   */
  open(seqId: string, salt?: string, keys?: BlockKeyChain): void {
    if (this.seqs.has(seqId)) throw new RangeError(`sequence ${seqId} is already open`);
    if (keys && (salt === undefined || keys.modelId !== this.modelId || keys.salt !== salt))
      throw new RangeError(`block keys of ${keys.modelId}/${keys.salt} given to a sequence of ${this.modelId}/${salt}`);
    this.seqs.set(seqId, {
      table: new SequenceBlockTable(),
      chain: salt === undefined ? undefined : (keys ?? new BlockKeyChain(this.modelId, salt)),
      ids: [],
      committed: 0,
    });
  }

  length(seqId: string): number {
    return this.seq(seqId).table.numTokens;
  }

  /** Physical blocks of the sequence, in token order. */
  blockIds(seqId: string): readonly number[] {
    return this.seq(seqId).table.blocks;
  }

  slotOf(seqId: string, pos: number): number {
    return this.seq(seqId).table.slotOf(pos);
  }

  /**
   * Tokens at the start of `tokens` whose KV the device holds under `salt` now: whole blocks,
   * leaving at least one token to compute (a prefill needs one row for its logits). Takes nothing.
   */
  cachedPrefix(salt: string, tokens: readonly number[], keys?: BlockKeyChain): number {
    return this.prefixCost(salt, tokens, keys).cachedTokens;
  }

  /**
   * What starting a sequence of `tokens` under `salt` takes from the available blocks: the new
   * blocks for what is not cached, plus the cached hits nobody holds (holding them takes them
   * out of the reclaimable pool). Hits that running sequences hold cost nothing. `keys`, a chain
   * the caller keeps for these same tokens, saves rehashing the prompt each time a waiting
   * request is planned (it is left keyed up to the first miss).
   */
  prefixCost(salt: string | undefined, tokens: readonly number[], keys?: BlockKeyChain): { cachedTokens: number; blocks: number } {
    if (keys && (keys.modelId !== this.modelId || keys.salt !== salt))
      throw new RangeError(`block keys of ${keys.modelId}/${keys.salt} asked of ${this.modelId}/${salt}`);
    // Staged hits have no holder either: taking them leaves the reclaimable pool as cached ones do.
    const hits = salt === undefined ? [] : this.match(keys ?? new BlockKeyChain(this.modelId, salt), tokens).ids;
    const unheld = hits.filter((id) => this.blocks.refCount(id) === 0).length;
    return { cachedTokens: hits.length * BLOCK_TOKENS, blocks: Math.ceil(tokens.length / BLOCK_TOKENS) - hits.length + unheld };
  }

  /**
   * Starts an empty sharing sequence with the longest cached prefix of `tokens` (see
   * {@link cachedPrefix}), holding its blocks; returns how many tokens it covers. Staged chunks
   * the prefix reaches become the sequence's own, named like blocks it wrote.
   */
  attachPrefix(seqId: string, tokens: readonly number[]): number {
    const s = this.seq(seqId);
    if (!s.chain) throw new RangeError(`sequence ${seqId} does not share prefixes`);
    if (s.table.numTokens !== 0) throw new RangeError(`sequence ${seqId} is not empty`);
    const { ids, staged } = this.match(s.chain, tokens);
    if (ids.length === 0) return 0;
    const adopted = new Set<number>();
    for (const hit of staged) for (const id of this.blocks.takeStaged(hit.key, hit.from, hit.to)) adopted.add(id);
    this.blocks.acquire(adopted.size === 0 ? ids : ids.filter((id) => !adopted.has(id)));
    const n = ids.length * BLOCK_TOKENS;
    s.table.append(n, ids);
    for (let i = 0; i < n; i++) s.ids.push(tokens[i]!);
    s.committed = ids.length;
    if (adopted.size > 0) this.nameAdopted(seqId, s.chain.keys, ids, adopted);
    this.staging.adopted += staged.length;
    return n;
  }

  /** Names taken-over staged blocks as the sequence's own, and reports each chunk now whole on the device. */
  private nameAdopted(seqId: string, keys: readonly string[], ids: readonly number[], adopted: ReadonlySet<number>): void {
    for (let b = 0; b < ids.length; b++) {
      if (adopted.has(ids[b]!)) this.nameBlock(seqId, keys, b, ids[b]!);
    }
  }

  /**
   * Names block `b` of a sequence (physical id `id`) with its key and, when that block completes a
   * chunk the device did not hold yet, reports the chunk as written.
   */
  private nameBlock(seqId: string, keys: readonly string[], b: number, id: number): void {
    const named = this.blocks.commit(id, keys[b]!);
    if (!named || (b + 1) % BLOCKS_PER_CHUNK !== 0 || this.chunks.has(keys[b]!)) return;
    this.chunks.add(keys[b]!);
    this.onChunk?.({
      kind: 'written',
      key: keys[b]!,
      seqId,
      chunk: (b + 1) / BLOCKS_PER_CHUNK - 1,
      superseded: keys.slice(b + 1 - BLOCKS_PER_CHUNK, b),
      ...content(this.seqs.get(seqId)?.ids, keys, b),
    });
  }

  /** New blocks that appending `tokens` to each listed sequence takes. */
  blocksNeeded(items: ReadonlyArray<{ readonly seqId: string; readonly tokens: number }>): number {
    return items.reduce((n, it) => n + this.seq(it.seqId).table.blocksNeeded(it.tokens), 0);
  }

  /**
   * Appends to several sequences at once, all or nothing: null — and no change — when the
   * available blocks (free and reclaimable cached ones) do not cover the whole batch. Returns
   * each item's token slots.
   */
  append(items: readonly LedgerAppend[]): Int32Array[] | null {
    for (const it of items) {
      const s = this.seq(it.seqId);
      if (s.chain && it.ids?.length !== it.tokens)
        throw new RangeError(`sequence ${it.seqId} shares prefixes: append needs its ${it.tokens} token ids`);
    }
    if (this.blocksNeeded(items) > this.blocks.numAvailable) return null;
    return items.map((it) => {
      const s = this.seq(it.seqId);
      if (s.chain) for (const t of it.ids!) s.ids.push(t);
      return s.table.appendFrom({ allocate: (n) => this.blocks.allocateFor(it.seqId, n) }, it.tokens)!.slots;
    });
  }

  /** Names every full block of the sequences written since the last commit (call after their KV is in place). */
  commit(seqIds: readonly string[]): void {
    for (const seqId of seqIds) {
      const s = this.seqs.get(seqId);
      if (!s?.chain) continue;
      // Keys taken over at open may run past what was written: only written blocks are named.
      s.chain.truncate(Math.floor(s.ids.length / BLOCK_TOKENS));
      s.chain.extend(s.ids);
      const keys = s.chain.keys;
      const blocks = s.table.blocks;
      for (let b = s.committed; b < keys.length; b++) this.nameBlock(seqId, keys, b, blocks[b]!);
      s.committed = keys.length;
    }
  }

  /** Lets go of the sequence's blocks: named ones stay cached for reuse, the partial tail is freed. */
  release(seqId: string): void {
    const s = this.seqs.get(seqId);
    if (!s) return;
    this.reportPartial(seqId, s);
    // Tail first, so the tail is the older in the LRU: a prefix is useless without its head.
    this.blocks.release(s.table.clear().reverse());
    this.blocks.closeGroup(seqId);
    this.seqs.delete(seqId);
  }

  /** Share of the capacity held by sequences (cached blocks are reclaimable, so they count as free). */
  usage(): number {
    return this.blocks.capacity === 0 ? 0 : this.blocks.numActive / this.blocks.capacity;
  }

  /** A sharing sequence's named blocks past its last whole chunk, while they are still its own (see DeviceChunkEvent). */
  private reportPartial(seqId: string, s: LedgerSeq): void {
    const inChunk = s.committed % BLOCKS_PER_CHUNK;
    if (!s.chain || inChunk === 0 || !this.onChunk) return;
    const keys = s.chain.keys.slice(s.committed - inChunk, s.committed);
    const chunk = (s.committed - inChunk) / BLOCKS_PER_CHUNK;
    this.onChunk({
      kind: 'partial',
      key: keys[inChunk - 1]!,
      seqId,
      chunk,
      tokens: inChunk * BLOCK_TOKENS,
      superseded: keys.slice(0, -1),
      ...content(s.ids, s.chain.keys, s.committed - 1),
    });
  }

  /**
   * Blocks of the longest prefix of `tokens` the device holds: named blocks, and staged chunks
   * where the named ones run out. A staged chunk is known by one key — a whole chunk's, or a
   * partial chunk's (the key of its last full block) — so the rest of the chunk is hashed and the
   * longest key of it that is staged wins. Leaves `chain` keyed exactly that far.
   */
  private match(chain: BlockKeyChain, tokens: readonly number[]): { ids: number[]; staged: StagedHit[] } {
    const limit = Math.floor(Math.max(0, tokens.length - 1) / BLOCK_TOKENS);
    const ids: number[] = [];
    const staged: StagedHit[] = [];
    for (let b = 0; b < limit;) {
      // Hash one block at a time and stop at the first miss: a miss costs one hash, not the prompt's.
      chain.extend(tokens, b + 1);
      const id = this.blocks.find(chain.keys[b]!);
      if (id !== undefined) {
        ids.push(id);
        b++;
        continue;
      }
      const start = b - (b % BLOCKS_PER_CHUNK);
      const hit = this.blocks.numStaged > 0 ? this.stagedIn(chain, tokens, b, Math.min(start + BLOCKS_PER_CHUNK, limit)) : undefined;
      if (!hit) {
        chain.truncate(b);
        break;
      }
      const from = b - start;
      const to = hit.last + 1 - start;
      staged.push({ key: chain.keys[hit.last]!, from, to });
      ids.push(...hit.ids.slice(from, to));
      b = hit.last + 1;
    }
    return { ids, staged };
  }

  /** The staged chunk whose key is the latest of blocks [b, top) of `tokens` (all in one chunk), and that block. */
  private stagedIn(
    chain: BlockKeyChain,
    tokens: readonly number[],
    b: number,
    top: number,
  ): { ids: readonly number[]; last: number } | undefined {
    chain.extend(tokens, top);
    for (let j = top - 1; j >= b; j--) {
      const ids = this.blocks.stagedIds(chain.keys[j]!);
      if (ids) return { ids, last: j };
    }
    return undefined;
  }

  private seq(seqId: string): LedgerSeq {
    const s = this.seqs.get(seqId);
    if (!s) throw new RangeError(`unknown sequence ${seqId}`);
    return s;
  }
}

/** Content of the chunk whose named blocks end at block `last` (see {@link ChunkContent}). */
function content(ids: readonly number[] | undefined, keys: readonly string[], last: number): ChunkContent {
  const first = last - (last % BLOCKS_PER_CHUNK);
  return {
    ...(ids ? { ids: ids.slice(first * BLOCK_TOKENS, (last + 1) * BLOCK_TOKENS) } : {}),
    parentKey: first === 0 ? null : keys[first - 1]!,
  };
}
