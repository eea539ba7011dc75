import type { PinHandle } from '../pool/lookup.types.js';
import { planOffload, type DeviceWrite } from '../pool/offload.planner.js';
import type { SegmentLocation, SegmentRef } from '../pool/pool.types.js';
import type { JournalSink, LedgerDevice, ModelKv, TierLedger } from './tier.ledger.js';

/** One SSD-only (chunk, layer) segment a restore reads into host memory. */
export interface PromotedSegment {
  readonly key: string;
  readonly layer: number;
  /** The SSD replica pinned for the whole restore. */
  readonly pinned: PinHandle;
  /**
   * A promotion into the host pool not yet checked (ring reads check it on its copy into the
   * payload): it joins the host tier only once that check passed, so the tier never lists
   * bytes nobody verified; freed when the restore ends without it.
   */
  pending?: SegmentLocation;
}

/** Where a promotion reads one segment into: a host-pool slot on `deviceIndex`, or (no device) scratch at `offset`. */
export interface PromotionTarget {
  readonly deviceIndex?: number;
  readonly offset: number;
}

/** Where one read of SSD-only segments lands: host-pool slots where there is room, scratch for the rest. */
export interface PromotionPlan<S> {
  readonly targets: ReadonlyMap<S, PromotionTarget>;
  /** Segments read into scratch, each a stride apart from offset 0. */
  readonly scratchSegments: number;
  /** The host-pool slots it took, to give back if the read fails or is not kept. */
  readonly writes: readonly DeviceWrite<{ s: S }>[];
}

/**
 * The books of one restore's promotions (segments only the SSD holds, read into the host pool so
 * the next turn finds them there): where each read lands, and which copies join the host tier.
 * A copy joins only once checked and only if no other restore promoted the same segment first;
 * else it is an orphan, its slot freed when the restore ends. Every copy that joins is pinned
 * until then. The subclass does the reads.
 */
export class PromotionBooks<S extends PromotedSegment, D extends LedgerDevice = LedgerDevice, J extends JournalSink = JournalSink> {
  /** Host replicas pinned for the restore: promotions it made, and ones another restore made first. */
  readonly pins: PinHandle[] = [];
  /** Host slots read into that another restore promoted first: freed when the restore ends. */
  readonly orphans: SegmentLocation[] = [];

  constructor(
    protected readonly ledger: TierLedger<D, J>,
    protected readonly m: ModelKv<J>,
  ) {}

  /** The host copy of `s` another restore promoted since this one was planned, if any: pinned until this restore ends, to read instead. */
  pinHostCopy(s: S): PinHandle | null {
    const pin = this.m.table.pin(s.key, s.layer, 'mem');
    if (pin) this.pins.push(pin);
    return pin;
  }

  /** Host-pool slots for `srcs` as far as the host tier has room (no eviction), scratch for the rest. */
  plan(srcs: readonly S[]): PromotionPlan<S> {
    const plan =
      this.ledger.host.length === 0
        ? undefined
        : planOffload(
            srcs.map((s) => ({ position: 0, s })),
            this.ledger.offloadDevices('mem'),
            this.m.stride,
          );
    const targets = new Map<S, PromotionTarget>();
    for (const w of plan?.writes ?? [])
      w.segments.forEach(({ s }, i) => targets.set(s, { deviceIndex: w.deviceIndex, offset: w.offsets[i]! }));
    let scratchSegments = 0;
    for (const s of srcs) if (!targets.has(s)) targets.set(s, { offset: scratchSegments++ * this.m.stride });
    return { targets, scratchSegments, writes: plan?.writes ?? [] };
  }

  /** Gives back a plan's host-pool slots (the read failed, found corruption, or its restore ended meanwhile). */
  unplan(plan: PromotionPlan<S>): void {
    for (const w of plan.writes) for (const x of w.extents) this.ledger.device(w.deviceIndex).allocator.free(x.offset, x.length);
  }

  /**
   * Segments read into their host-pool slots: checked on the way in, each joins the host tier
   * (or is an orphan, promoted by another restore first); unchecked, each waits as `pending`
   * for {@link keep}. Scratch copies never join.
   */
  landed(srcs: readonly S[], plan: PromotionPlan<S>, checked: boolean): void {
    const kept: Array<{ seg: SegmentRef; location: SegmentLocation }> = [];
    for (const s of srcs) {
      const t = plan.targets.get(s)!;
      if (t.deviceIndex === undefined) continue;
      const { crc32c } = s.pinned.location;
      const location: SegmentLocation = { deviceIndex: t.deviceIndex, type: 'mem', offset: t.offset, length: this.m.segBytes, crc32c };
      if (!checked) s.pending = location;
      else if (this.m.table.get(s.key, s.layer, 'mem')) this.orphans.push(location);
      else kept.push({ seg: { chunkKey: s.key, position: this.m.table.positionOf(s.key)!, layer: s.layer }, location });
    }
    this.join(kept);
  }

  /** Promotions the copy just verified join the host tier. */
  keep(srcs: readonly S[]): void {
    const kept: Array<{ seg: SegmentRef; location: SegmentLocation }> = [];
    for (const s of srcs) {
      if (!s.pending) continue;
      const position = this.m.table.positionOf(s.key);
      // Promoted by another restore meanwhile, or the chunk left the table since it was read.
      if (position === undefined || this.m.table.get(s.key, s.layer, 'mem')) this.orphans.push(s.pending);
      else kept.push({ seg: { chunkKey: s.key, position, layer: s.layer }, location: s.pending });
      s.pending = undefined;
    }
    this.join(kept);
  }

  /** Promoted copies join the host tier, pinned until this restore ends. */
  private join(kept: Array<{ seg: SegmentRef; location: SegmentLocation }>): void {
    this.ledger.put(this.m, kept);
    for (const k of kept) {
      const pin = this.m.table.pin(k.seg.chunkKey, k.seg.layer, 'mem');
      if (pin) this.pins.push(pin);
    }
  }
}
