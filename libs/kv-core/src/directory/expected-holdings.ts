import { BLOCK_TOKENS, BLOCKS_PER_CHUNK, CHUNK_TOKENS } from '../keys/chunk.constants.js';
import { chunkBlockKeys } from '../keys/block-key.chain.js';

/** What routing a request to a node leads that node to hold (on its device) once it runs. */
export interface ExpectedPrompt {
  /** The prompt's whole-chunk keys. */
  readonly chunkKeys: readonly string[];
  /**
   * Block key of the prompt's last full 16-token block: it names the whole prompt up to there,
   * the tail past the last whole chunk included. Absent for a prompt under one block.
   */
  readonly promptKey?: string;
  /** Prompt tokens the prompt key covers (a multiple of 16). */
  readonly promptKeyTokens?: number;
}

/** What one routing recorded, so that a failed dispatch can take back exactly that. */
export interface ExpectedRecord {
  readonly nodeId: string;
  readonly chunkKeys: readonly string[];
  readonly promptKey?: string;
}

/** A recorded prompt that a new prompt extends: the node it went to and how much of the new prompt it covers. */
export interface RecordedPromptMatch {
  readonly nodeId: string;
  /** Leading tokens of the new prompt the recorded prompt's key covers (whole blocks). */
  readonly tokens: number;
}

export interface ExpectedHoldingsStats {
  /** (key, node) pairs held now: what the bound limits. */
  readonly holdings: number;
  /** Chunk expectations a KV event confirmed (the directory holds them since). */
  readonly confirmed: number;
  /** Expectations the node reported gone (evicted) or its dispatch failed (refused, unreachable). */
  readonly removed: number;
  /** Expectations that lived out their TTL unconfirmed. */
  readonly expired: number;
  /** Expectations forgotten to stay within the bound. */
  readonly evicted: number;
}

/** How far back from a prompt's end {@link ExpectedHoldings.longestRecordedPrompt} looks, in chunks. */
export const RECORDED_PROMPT_SCAN_CHUNKS = 8;

type Kind = 'chunk' | 'prompt';

interface Entry {
  readonly kind: Kind;
  readonly nodeId: string;
  readonly key: string;
  readonly expiresAtMs: number;
}

/**
 * What the scheduler just routed and the nodes have not reported yet (Dynamo's router and
 * llm-d's approximate prefix scorer keep the same): a node learns a prompt's KV as it runs it,
 * but its KV event reaches the scheduler only after that, and a conversation's next turn, sent
 * the moment the last one ended, is routed before it. Two kinds of (key, node) entries:
 *
 * - **chunk**: a whole-chunk key of a routed prompt. Routing counts it as held on the node's
 *   device (see `KvDirectory.prefixes`' `expected` hook) until a KV event from that node
 *   stores it (confirmed: the directory has it now) or removes it (evicted), the dispatch
 *   fails, or its TTL passes.
 * - **prompt**: the block key of a routed prompt's last full block. No KV event names it (nodes
 *   report whole chunks and the partial chunk a *finished* sequence leaves, prompt and reply),
 *   so it lives for its TTL unless the node reports that key removed, the dispatch fails or
 *   the node leaves. It lets a follow-up that extends a prompt with no whole chunk (a short
 *   first turn) find the node whose device holds it.
 *
 * Soft state like the directory: a wrong entry costs one routing hint. Bounded by
 * `maxHoldings` pairs; the oldest recorded goes first.
 *
 * Invariants: `entries` iterates in recording order, which is expiry order since every entry
 * lives `ttlMs` (a re-record moves the entry to the end), so expiry and eviction pop from the
 * front in O(1); `byKey` and `byNode` index exactly the pairs in `entries`. Lookups also check
 * expiry themselves, so a clock that steps back never revives an entry past its time.
 */
export class ExpectedHoldings {
  private readonly entries = new Map<string, Entry>();
  /** kind + key → node → expiry (unix ms). */
  private readonly byKey = new Map<string, Map<string, number>>();
  private readonly byNode = new Map<string, Set<string>>();
  private promptEntries = 0;
  private counts = { confirmed: 0, removed: 0, expired: 0, evicted: 0 };

  constructor(
    readonly maxHoldings: number,
    readonly ttlMs: number,
  ) {
    if (!Number.isInteger(maxHoldings) || maxHoldings < 1)
      throw new RangeError(`maxHoldings must be a positive integer, got ${maxHoldings}`);
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) throw new RangeError(`ttlMs must be positive, got ${ttlMs}`);
  }

  /** A request was routed to `nodeId` at `nowMs`: its prompt's KV will be there. */
  record(nodeId: string, prompt: ExpectedPrompt, nowMs: number): ExpectedRecord {
    this.purge(nowMs);
    const expiresAtMs = nowMs + this.ttlMs;
    for (const key of prompt.chunkKeys) this.put({ kind: 'chunk', nodeId, key, expiresAtMs });
    if (prompt.promptKey !== undefined) this.put({ kind: 'prompt', nodeId, key: prompt.promptKey, expiresAtMs });
    while (this.entries.size > this.maxHoldings) {
      this.drop(this.entries.keys().next().value!);
      this.counts.evicted++;
    }
    return { nodeId, chunkKeys: prompt.chunkKeys, ...(prompt.promptKey !== undefined ? { promptKey: prompt.promptKey } : {}) };
  }

  /** A KV event from `nodeId` stored these keys: the directory knows them now. */
  confirm(nodeId: string, keys: readonly string[]): void {
    for (const key of keys) if (this.drop(id('chunk', nodeId, key))) this.counts.confirmed++;
  }

  /** The node reported these keys gone from a tier (evicted, truncated): neither kind stands. */
  remove(nodeId: string, keys: readonly string[]): void {
    for (const key of keys) {
      if (this.drop(id('chunk', nodeId, key))) this.counts.removed++;
      if (this.drop(id('prompt', nodeId, key))) this.counts.removed++;
    }
  }

  /**
   * The dispatch this record was made for failed (refused, unreachable): the node will not hold
   * its prompt. A concurrent request that recorded the same pair loses it too: it costs that
   * request's follow-up a hint, never a wrong answer.
   */
  forget(rec: ExpectedRecord): void {
    this.remove(rec.nodeId, rec.promptKey !== undefined ? [...rec.chunkKeys, rec.promptKey] : rec.chunkKeys);
  }

  /** The node left: nothing is coming from it. */
  dropNode(nodeId: string): void {
    for (const entryId of [...(this.byNode.get(nodeId) ?? [])]) this.drop(entryId);
  }

  /** Nodes expected to hold the chunk `key` at `nowMs` (for `KvDirectory.prefixes`). */
  holders(key: string, nowMs: number): string[] {
    const nodes = this.byKey.get(`chunk\u0000${key}`);
    if (!nodes) return [];
    const out: string[] = [];
    for (const [nodeId, expiresAtMs] of nodes) if (expiresAtMs > nowMs) out.push(nodeId);
    return out;
  }

  /**
   * The longest recorded prompt that `tokens` extends, and the node it was routed to (the most
   * recent one when several were). Looks at the block keys of the chunk the prompt ends in and
   * of up to {@link RECORDED_PROMPT_SCAN_CHUNKS} − 1 chunks before it, from the end: a
   * follow-up adds a reply and a new message, rarely more. Null when none is recorded or the
   * chunk keys do not fit the tokens (the node refuses such a request anyway). `blockKeys`, the
   * prompt's block keys by chunk when the caller has them, saves hashing them here.
   */
  longestRecordedPrompt(
    model: string,
    salt: string,
    tokens: readonly number[],
    chunkKeys: readonly string[],
    nowMs: number,
    blockKeys?: (chunk: number) => readonly string[],
  ): RecordedPromptMatch | null {
    if (this.promptEntries === 0 || tokens.length < BLOCK_TOKENS) return null;
    const last = Math.floor(tokens.length / CHUNK_TOKENS);
    for (let c = last; c >= Math.max(0, last - RECORDED_PROMPT_SCAN_CHUNKS + 1); c--) {
      let blocks: readonly string[];
      try {
        blocks = blockKeys ? blockKeys(c) : chunkBlockKeys(model, salt, tokens, chunkKeys, c);
      } catch {
        return null;
      }
      for (let j = blocks.length - 1; j >= 0; j--) {
        const nodeId = this.latestHolder(`prompt\u0000${blocks[j]!}`, nowMs);
        if (nodeId !== null) return { nodeId, tokens: c * CHUNK_TOKENS + (j + 1) * BLOCK_TOKENS };
      }
    }
    return null;
  }

  stats(nowMs: number): ExpectedHoldingsStats {
    this.purge(nowMs);
    return { holdings: this.entries.size, ...this.counts };
  }

  private latestHolder(indexKey: string, nowMs: number): string | null {
    let best: string | null = null;
    let bestExpiry = nowMs;
    for (const [nodeId, expiresAtMs] of this.byKey.get(indexKey) ?? []) {
      if (expiresAtMs > bestExpiry) {
        best = nodeId;
        bestExpiry = expiresAtMs;
      }
    }
    return best;
  }

  private put(e: Entry): void {
    const entryId = id(e.kind, e.nodeId, e.key);
    this.drop(entryId);
    this.entries.set(entryId, e);
    const indexKey = `${e.kind}\u0000${e.key}`;
    let nodes = this.byKey.get(indexKey);
    if (!nodes) this.byKey.set(indexKey, (nodes = new Map()));
    nodes.set(e.nodeId, e.expiresAtMs);
    let held = this.byNode.get(e.nodeId);
    if (!held) this.byNode.set(e.nodeId, (held = new Set()));
    held.add(entryId);
    if (e.kind === 'prompt') this.promptEntries++;
  }

  /** Removes one entry from every index; false when it was not there. */
  private drop(entryId: string): boolean {
    const e = this.entries.get(entryId);
    if (!e) return false;
    this.entries.delete(entryId);
    const indexKey = `${e.kind}\u0000${e.key}`;
    const nodes = this.byKey.get(indexKey)!;
    nodes.delete(e.nodeId);
    if (nodes.size === 0) this.byKey.delete(indexKey);
    const held = this.byNode.get(e.nodeId)!;
    held.delete(entryId);
    if (held.size === 0) this.byNode.delete(e.nodeId);
    if (e.kind === 'prompt') this.promptEntries--;
    return true;
  }

  private purge(nowMs: number): void {
    for (const [entryId, e] of this.entries) {
      if (e.expiresAtMs > nowMs) return;
      this.drop(entryId);
      this.counts.expired++;
    }
  }
}

/**
 * What routing `tokens` (with their whole-chunk keys) to a node leads it to hold: the chunk keys and the key of the prompt's last full
 * block.
 */
export function expectedPrompt(model: string, salt: string, tokens: readonly number[], chunkKeys: readonly string[]): ExpectedPrompt {
  const fullBlocks = Math.floor(tokens.length / BLOCK_TOKENS);
  if (fullBlocks === 0) return { chunkKeys };
  const chunk = Math.floor((fullBlocks - 1) / BLOCKS_PER_CHUNK);
  let blocks: string[];
  try {
    blocks = chunkBlockKeys(model, salt, tokens, chunkKeys, chunk);
  } catch {
    // Chunk keys that do not fit the tokens: the node refuses the request, nothing to expect.
    return { chunkKeys: [] };
  }
  return { chunkKeys, promptKey: blocks.at(-1)!, promptKeyTokens: fullBlocks * BLOCK_TOKENS };
}

function id(kind: Kind, nodeId: string, key: string): string {
  return `${kind}\u0000${nodeId}\u0000${key}`;
}
