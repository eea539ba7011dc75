import { compareEntries, Slot, type Entry } from './lookup.records.js';
import { OrderedSet } from './ordered.set.js';
import { tierIndex, type PoolTier } from './pool.types.js';

/**
 * Eviction order of one tier's entries, with O(1) touch and pin and O(log n) per victim.
 *
 * Invariant (checked by the lookup table's checkInvariant):
 *   - every live entry with no pins is filed in `open` or `guarded` (slot says which);
 *     a pinned or removed entry may still be filed — pins are taken out lazily;
 *   - an entry's filed stamp is ≤ its chunk's stamp — touches are applied lazily;
 *   - `guarded` holds only entries that are the last copy of a referenced chunk (refs > 0
 *     and no replica in the other tier); `open` may hold such entries too — they move to
 *     `guarded` lazily. Events that end guarding (a replica appears in the other tier, the
 *     chunk's refs drop to 0) move entries back to `open` eagerly.
 *
 * Laziness is what keeps the request path cheap: a request touches every chunk of its
 * prefix and pins every segment it loads; re-filing each (chunk, layer) there would cost
 * O(layers · log n) per chunk. Instead a victim scan fixes what it meets at the front: a
 * stale stamp is re-filed (later, so it is met again in its right place), a pinned entry is
 * taken out (unpin files it again), a guarded one moves to `guarded`. Each fix is paid once
 * per touch/pin, so a scan costs O(log n) per victim amortised.
 */
export class TierIndex {
  readonly open = new OrderedSet<Entry>(compareEntries);
  readonly guarded = new OrderedSet<Entry>(compareEntries);
  private readonly other: 0 | 1;

  constructor(readonly tier: PoolTier) {
    this.other = tierIndex(tier) === 0 ? 1 : 0;
  }

  /** Files an unfiled entry in `open` under its chunk's current stamp. */
  file(e: Entry): void {
    e.stamp = e.chunk.stamp;
    this.open.insert(e);
    e.slot = Slot.Open;
  }

  unfile(e: Entry): void {
    if (e.slot === Slot.Open) this.open.delete(e);
    else if (e.slot === Slot.Guarded) this.guarded.delete(e);
    e.slot = Slot.None;
  }

  /** The entry stopped being a guarded last copy: back to `open`. */
  release(e: Entry): void {
    if (e.slot !== Slot.Guarded) return;
    this.guarded.delete(e);
    this.open.insert(e);
    e.slot = Slot.Open;
  }

  isGuarded(e: Entry): boolean {
    return e.chunk.refs > 0 && e.chunk.replicas[this.other][e.layer] === undefined;
  }

  /**
   * Entries to evict, first victim first, until their lengths reach `bytesNeeded` or nothing
   * evictable is left. With `protect`, last copies of referenced chunks are never chosen.
   * Chooses without removing; it only re-files entries, which changes no observable state.
   */
  choose(bytesNeeded: number, protect: boolean): Entry[] {
    const out: Entry[] = [];
    let got = 0;
    let cursor: Entry | undefined;
    while (got < bytesNeeded) {
      const a = cursor ? this.open.higher(cursor) : this.open.first();
      const b = protect ? undefined : cursor ? this.guarded.higher(cursor) : this.guarded.first();
      const e = !b || (a && compareEntries(a, b) < 0) ? a : b;
      if (!e) break;
      if (this.fix(e, protect)) continue;
      out.push(e);
      got += e.loc.length;
      cursor = e;
    }
    return out;
  }

  /** Normalises `e` if it is out of place; true if it moved (the scan then looks again). */
  private fix(e: Entry, protect: boolean): boolean {
    if (e.pins > 0 || e.removed) {
      this.unfile(e);
      return true;
    }
    if (e.stamp < e.chunk.stamp) {
      const slot = e.slot;
      this.unfile(e);
      e.stamp = e.chunk.stamp;
      (slot === Slot.Guarded ? this.guarded : this.open).insert(e);
      e.slot = slot;
      return true;
    }
    if (protect && e.slot === Slot.Open && this.isGuarded(e)) {
      this.open.delete(e);
      this.guarded.insert(e);
      e.slot = Slot.Guarded;
      return true;
    }
    return false;
  }
}
