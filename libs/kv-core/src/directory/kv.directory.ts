import {
  DIRECTORY_TIERS,
  type ChunkHolding,
  type DirectoryChange,
  type DirectoryTier,
  type KvDirectoryStats,
  type NodePrefix,
} from './kv-directory.types.js';

/** Bit per tier in a holding mask; truncated copies are not counted (they lack later layers). */
const BIT: Readonly<Record<DirectoryTier, number>> = { device: 1, host: 2, ssd: 4 };

/** Fastest tier of a non-empty mask (an empty one is never stored). */
function fastest(mask: number): DirectoryTier {
  for (const t of DIRECTORY_TIERS) if (mask & BIT[t]) return t;
  throw new Error(`KvDirectory: empty holding mask ${mask} (broken invariant)`);
}

/**
 * The scheduler's KV directory (ARCHITECTURE §3): chunk key → the nodes holding it and in which
 * tiers, built from the nodes' KV events. Soft state: a lost entry only costs a routing hint, so
 * the memory is bounded by `maxHoldings` (key, node) pairs and the least recently *used* key
 * (stored or looked up) is forgotten first.
 *
 * Invariants: `keys` iterates in recency order, oldest first (a touch re-inserts the key; Map
 * keeps insertion order, so touch and evict are O(1)); `byNode.get(n)` holds exactly the keys
 * whose entry names n; `holdingCount` is the sum of entry sizes and never exceeds `maxHoldings`
 * after a public call returns.
 */
export class KvDirectory {
  /** key → (node → tier mask of complete copies). */
  private readonly keys = new Map<string, Map<string, number>>();
  private readonly byNode = new Map<string, Set<string>>();
  private holdingCount = 0;
  private evicted = 0;

  constructor(readonly maxHoldings: number) {
    if (!Number.isInteger(maxHoldings) || maxHoldings < 1)
      throw new RangeError(`maxHoldings must be a positive integer, got ${maxHoldings}`);
  }

  /** Applies one node's changes in order (a KvEvent's `changes`). */
  apply(nodeId: string, changes: readonly DirectoryChange[]): void {
    for (const c of changes) {
      for (const key of c.keys) {
        if (c.kind === 'stored') this.setBit(nodeId, key, BIT[c.tier]);
        else this.clearBit(nodeId, key, BIT[c.tier]);
      }
    }
    this.enforceBound();
  }

  /** A full report: what the node holds now replaces everything known about it. */
  replaceNode(nodeId: string, changes: readonly DirectoryChange[]): void {
    this.dropNode(nodeId);
    this.apply(
      nodeId,
      changes.filter((c) => c.kind === 'stored'),
    );
  }

  /** The node left or died: nothing it held can be fetched from it. */
  dropNode(nodeId: string): void {
    const held = this.byNode.get(nodeId);
    if (!held) return;
    for (const key of held) {
      const entry = this.keys.get(key);
      if (!entry) continue;
      entry.delete(nodeId);
      this.holdingCount--;
      if (entry.size === 0) this.keys.delete(key);
    }
    this.byNode.delete(nodeId);
  }

  /** Holders of one key, fastest tier first then by node id; touches the key. */
  holders(key: string): ChunkHolding[] {
    const entry = this.touch(key);
    if (!entry) return [];
    return [...entry]
      .map(([nodeId, mask]) => ({ nodeId, tier: fastest(mask) }))
      .sort((a, b) => rank(a.tier) - rank(b.tier) || (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  }

  /** Holders of one key with every tier each holds it in, fastest first (by node id); touches the key. */
  holdings(key: string): Array<{ nodeId: string; tiers: DirectoryTier[] }> {
    const entry = this.touch(key);
    if (!entry) return [];
    return [...entry]
      .map(([nodeId, mask]) => ({ nodeId, tiers: DIRECTORY_TIERS.filter((t) => mask & BIT[t]) }))
      .sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  }

  /**
   * For every node holding the first key: how many leading keys of `keys` it holds and in which
   * tier. Keys are chained (key i covers tokens 0..i), so a node's useful prefix ends at its first
   * missing key. Touches every key it reads. Nodes holding nothing are left out.
   *
   * `expected`: nodes a key was just routed to and that have not reported it yet
   * (`ExpectedHoldings.holders`); they count as holding it on the device, where running the
   * request puts it.
   */
  prefixes(keys: readonly string[], expected?: (key: string) => readonly string[]): NodePrefix[] {
    // Routing asks this for every request: the nodes still holding the prefix are the keys of
    // `out` whose tier list is as long as the keys read so far (a handful of nodes), so no set is
    // built per key.
    const out = new Map<string, DirectoryTier[]>();
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      const entry = this.touch(key);
      const coming = expected ? expected(key) : NO_NODES;
      let held = 0;
      if (i === 0) {
        if (entry) for (const [nodeId, mask] of entry) out.set(nodeId, [fastest(coming.includes(nodeId) ? mask | BIT.device : mask)]);
        for (const nodeId of coming) if (!out.has(nodeId)) out.set(nodeId, [fastest(BIT.device)]);
        held = out.size;
      } else {
        for (const [nodeId, tiers] of out) {
          if (tiers.length !== i) continue;
          const mask = (entry?.get(nodeId) ?? 0) | (coming.includes(nodeId) ? BIT.device : 0);
          if (mask === 0) continue;
          tiers.push(fastest(mask));
          held++;
        }
      }
      if (held === 0) break;
    }
    const found: NodePrefix[] = [];
    for (const [nodeId, tiers] of out) found.push({ nodeId, prefixChunks: tiers.length, tiers });
    return found.sort((a, b) => (a.nodeId < b.nodeId ? -1 : 1));
  }

  /** Keys one node holds in each tier (O(keys of the node): for status pages, not routing). */
  tierCounts(nodeId: string): Record<DirectoryTier, number> {
    const out: Record<DirectoryTier, number> = { device: 0, host: 0, ssd: 0 };
    for (const key of this.byNode.get(nodeId) ?? []) {
      const mask = this.keys.get(key)?.get(nodeId) ?? 0;
      for (const t of DIRECTORY_TIERS) if (mask & BIT[t]) out[t]++;
    }
    return out;
  }

  /** Keys one node is known to hold (any tier). */
  keysOf(nodeId: string): number {
    return this.byNode.get(nodeId)?.size ?? 0;
  }

  stats(): KvDirectoryStats {
    return { keys: this.keys.size, holdings: this.holdingCount, evictions: this.evicted };
  }

  private touch(key: string): Map<string, number> | undefined {
    const entry = this.keys.get(key);
    if (entry) {
      this.keys.delete(key);
      this.keys.set(key, entry);
    }
    return entry;
  }

  private setBit(nodeId: string, key: string, bit: number): void {
    let entry = this.touch(key);
    if (!entry) {
      entry = new Map();
      this.keys.set(key, entry);
    }
    const before = entry.get(nodeId);
    if (before === undefined) {
      this.holdingCount++;
      let held = this.byNode.get(nodeId);
      if (!held) this.byNode.set(nodeId, (held = new Set()));
      held.add(key);
    }
    entry.set(nodeId, (before ?? 0) | bit);
  }

  /** A removed or truncated tier; the holding goes when no tier is left. */
  private clearBit(nodeId: string, key: string, bit: number): void {
    const entry = this.keys.get(key);
    const before = entry?.get(nodeId);
    if (!entry || before === undefined) return;
    const mask = before & ~bit;
    if (mask !== 0) {
      entry.set(nodeId, mask);
      return;
    }
    entry.delete(nodeId);
    this.holdingCount--;
    this.byNode.get(nodeId)?.delete(key);
    if (entry.size === 0) this.keys.delete(key);
  }

  private enforceBound(): void {
    while (this.holdingCount > this.maxHoldings) {
      const oldest = this.keys.keys().next();
      if (oldest.done) throw new Error('KvDirectory: holdings counted but no key left (broken invariant)');
      const entry = this.keys.get(oldest.value)!;
      for (const nodeId of entry.keys()) this.byNode.get(nodeId)?.delete(oldest.value);
      this.holdingCount -= entry.size;
      this.keys.delete(oldest.value);
      this.evicted++;
    }
  }
}

const NO_NODES: readonly string[] = [];

function rank(tier: DirectoryTier): number {
  return DIRECTORY_TIERS.indexOf(tier);
}
