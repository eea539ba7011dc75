import { compareEvictionOrder, OrderedSet, type EvictionKey } from '@mnemo/kv-core';

interface Entry extends EvictionKey {
  readonly session: number;
  readonly bytes: number;
  tier: number;
  /** The tier it is moving down from (its own tier when newly placed). */
  from: number;
}

/**
 * Whole sessions' KV in a chain of tiers, fastest first (a GPU's own cache, then a slower tier:
 * lent worker memory, host memory). A served session goes to the first tier; what overflows a
 * tier moves down in kv-core's eviction order (least recently used request first), and what
 * overflows the last is dropped (recomputed on its next turn). Sessions are whole: the twin's
 * experiments serve whole histories, so layer and chunk order inside a session never decide.
 */
export class SessionKvTiers {
  private readonly used: number[];
  private readonly order: OrderedSet<Entry>[];
  private readonly entries = new Map<number, Entry>();
  private readonly capacity: number[];
  private readonly moved: number[];

  constructor(capacities: readonly number[]) {
    if (capacities.length === 0 || capacities.some((c) => !(c >= 0))) throw new RangeError('tiers need capacities ≥ 0');
    this.capacity = [...capacities];
    this.used = capacities.map(() => 0);
    this.moved = capacities.map(() => 0);
    this.order = capacities.map(() => new OrderedSet<Entry>(compareEvictionOrder));
  }

  /** The tier holding `session`'s KV, or null when none does. */
  tierOf(session: number): number | null {
    return this.entries.get(session)?.tier ?? null;
  }

  get capacities(): readonly number[] {
    return this.capacity;
  }

  usedBytes(tier: number): number {
    return this.used[tier]!;
  }

  /** Bytes moved down into `tier` from the tier above it since the start (what its link carried). */
  movedInto(tier: number): number {
    return this.moved[tier]!;
  }

  /** A tier grows or shrinks (memory lent or taken back); what no longer fits moves down. */
  resize(tier: number, bytes: number): void {
    if (!(bytes >= 0)) throw new RangeError(`a tier's capacity must be ≥ 0, got ${bytes}`);
    this.capacity[tier] = bytes;
    this.spill(tier);
  }

  /** `session` was served at `stamp` and now holds `bytes` of KV: it takes the first tier it fits. */
  touch(session: number, bytes: number, stamp: number): void {
    this.remove(session);
    const start = this.capacity.findIndex((c) => c >= bytes);
    if (start < 0) return;
    this.place({ session, bytes, stamp, layer: 0, position: session, tier: start, from: start });
  }

  private place(e: Entry): void {
    for (let t = e.tier; t < this.capacity.length; t++) {
      if (this.capacity[t]! < e.bytes) continue;
      e.tier = t;
      this.entries.set(e.session, e);
      this.order[t]!.insert(e);
      this.used[t]! += e.bytes;
      if (t > e.from) this.moved[t]! += e.bytes;
      this.spill(t);
      return;
    }
  }

  private spill(t: number): void {
    while (this.used[t]! > this.capacity[t]!) {
      const victim = this.order[t]!.first()!;
      this.unlink(victim);
      this.place({ ...victim, tier: t + 1, from: t });
    }
  }

  /** `session` ended: its KV is freed wherever it was. */
  remove(session: number): void {
    const e = this.entries.get(session);
    if (e) this.unlink(e);
  }

  private unlink(e: Entry): void {
    this.order[e.tier]!.delete(e);
    this.used[e.tier]! -= e.bytes;
    this.entries.delete(e.session);
  }
}
