/**
 * One owner's current block group: ids `[start, end)` were handed to it as one contiguous run;
 * `[start, next)` are allocated (or were: they may be released since), `[next, end)` are free
 * ids reserved for its next allocations — the unused tail another owner may steal.
 */
export interface BlockGroup {
  readonly owner: string;
  readonly start: number;
  next: number;
  end: number;
}

/**
 * The live block groups of a device block manager, one per owner (a sequence). Stealing scans the
 * groups (one per running sequence, tens) for the longest tail: O(groups), off the per-block path.
 */
export class BlockGroupTable {
  private readonly byOwner = new Map<string, BlockGroup>();

  get size(): number {
    return this.byOwner.size;
  }

  get(owner: string): BlockGroup | undefined {
    return this.byOwner.get(owner);
  }

  /** Replaces the owner's group (its previous one must have no tail left). */
  open(owner: string, start: number, end: number): BlockGroup {
    const prev = this.byOwner.get(owner);
    if (prev && prev.next < prev.end) throw new Error(`group of ${owner} still reserves [${prev.next},${prev.end})`);
    const g: BlockGroup = { owner, start, next: start, end };
    this.byOwner.set(owner, g);
    return g;
  }

  /** Forgets the owner's group; returns its unused tail for the caller to free. */
  close(owner: string): { start: number; end: number } | undefined {
    const g = this.byOwner.get(owner);
    if (!g) return undefined;
    this.byOwner.delete(owner);
    return { start: g.next, end: g.end };
  }

  /** The group, other than `except`'s, with the longest unused tail; undefined when none has one. */
  longestTail(except: string): BlockGroup | undefined {
    let best: BlockGroup | undefined;
    for (const g of this.byOwner.values()) {
      if (g.owner !== except && g.end > g.next && (!best || g.end - g.next > best.end - best.next)) best = g;
    }
    return best;
  }

  /** Cuts every reservation at `capacity` (the id space shrank). */
  clip(capacity: number): void {
    for (const g of this.byOwner.values()) {
      g.end = Math.min(g.end, Math.max(capacity, g.next));
    }
  }

  /** Reserved (unused tail) ranges, for invariant checks. */
  tails(): Array<[number, number]> {
    return [...this.byOwner.values()].filter((g) => g.end > g.next).map((g) => [g.next, g.end]);
  }
}
