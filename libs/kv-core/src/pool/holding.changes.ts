import type { LookupTable } from './lookup.table.js';
import type { Removal } from './lookup.types.js';
import type { PoolTier } from './pool.types.js';

/** A tier a node reports holdings of: its device cache, or one of its pool tiers. */
export type HoldingTier = PoolTier | 'device';

/** One change to what a tier of a node holds. */
export interface HoldingChange {
  readonly kind: 'stored' | 'removed' | 'truncated';
  readonly tier: HoldingTier;
  readonly model: string;
  readonly keys: readonly string[];
  readonly layers?: number;
}

/** Reporting order of a full report, and each tier's bit in a key's mask. */
const BIT: Readonly<Record<HoldingTier, number>> = { device: 1, mem: 2, ssd: 4 };

/**
 * The changes collected for one KV event: those of one kind, tier, model and layer count are
 * merged (their keys once each, in first-seen order), the groups kept in the order they began.
 */
export class HoldingChangeBatch {
  private pending = new Map<string, { change: HoldingChange; keys: Set<string> }>();

  get size(): number {
    return this.pending.size;
  }

  add(change: HoldingChange): void {
    if (change.keys.length === 0) return;
    const id = `${change.kind}/${change.tier}/${change.model}/${change.layers ?? ''}`;
    const entry = this.pending.get(id) ?? { change, keys: new Set<string>() };
    for (const k of change.keys) entry.keys.add(k);
    this.pending.set(id, entry);
  }

  /** The merged changes, and an empty batch after. */
  take(): HoldingChange[] {
    const out = [...this.pending.values()].map(({ change, keys }) => ({ ...change, keys: [...keys] }));
    this.pending.clear();
    return out;
  }
}

/**
 * What a node's reported changes add up to: per model, the chunks each tier holds in every layer
 * (a truncated copy is not one a peer can serve, so truncation removes it like an eviction). A
 * key no tier holds is forgotten, so the ledger is as large as the node's holdings.
 */
export class TierHoldings {
  private readonly models = new Map<string, Map<string, number>>();

  apply(c: HoldingChange): void {
    let keys = this.models.get(c.model);
    if (!keys) this.models.set(c.model, (keys = new Map()));
    for (const k of c.keys) {
      const mask = c.kind === 'stored' ? (keys.get(k) ?? 0) | BIT[c.tier] : (keys.get(k) ?? 0) & ~BIT[c.tier];
      if (mask === 0) keys.delete(k);
      else keys.set(k, mask);
    }
  }

  /** Everything held, as `stored` changes: per model in first-seen order, device then host then SSD; no empty change. */
  report(): HoldingChange[] {
    const out: HoldingChange[] = [];
    for (const [model, keys] of this.models)
      for (const [tier, bit] of Object.entries(BIT) as Array<[HoldingTier, number]>) {
        const held = [...keys].filter(([, mask]) => mask & bit).map(([k]) => k);
        if (held.length > 0) out.push({ kind: 'stored', tier, model, keys: held });
      }
    return out;
  }
}

/** Layers `tier` holds of the chunk counted from layer 0 (eviction drops later layers first, so these are what a load can use). */
export function leadingLayers(table: LookupTable, key: string, tier: PoolTier): number {
  const held = table.layersIn(key, tier);
  let n = 0;
  while (n < held.length && held[n] === n) n++;
  return n;
}

/**
 * What removals from one model's table leave of the chunks they touched, as the changes the node
 * reports: `removed` where the tier keeps no layer of a chunk, `truncated` (grouped by the layers
 * left from layer 0) where it keeps fewer than all; a chunk still whole there is no change. Tiers
 * in the order the removals first touch them, `removed` before `truncated`.
 */
export function removalChanges(
  table: LookupTable,
  model: string,
  removals: readonly Removal[],
): Array<HoldingChange & { readonly tier: PoolTier }> {
  const touched = new Map<PoolTier, Set<string>>();
  for (const r of removals) {
    if (!touched.has(r.tier)) touched.set(r.tier, new Set());
    touched.get(r.tier)!.add(r.chunkKey);
  }
  const out: Array<HoldingChange & { readonly tier: PoolTier }> = [];
  for (const [tier, keys] of touched) {
    const gone: string[] = [];
    const cut = new Map<number, string[]>();
    for (const k of keys) {
      const left = leadingLayers(table, k, tier);
      if (left === 0 && table.layersIn(k, tier).length === 0) gone.push(k);
      else if (left < table.numLayers) cut.set(left, [...(cut.get(left) ?? []), k]);
    }
    if (gone.length > 0) out.push({ kind: 'removed', tier, model, keys: gone });
    for (const [layers, ks] of cut) out.push({ kind: 'truncated', tier, model, keys: ks, layers });
  }
  return out;
}
