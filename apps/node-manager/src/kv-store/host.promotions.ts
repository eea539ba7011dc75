import {
  ErrorCode,
  MnemoError,
  planOffload,
  type PinHandle,
  type PoolTier,
  type RestoreBuffers,
  type SegmentLocation,
  type SegmentRef,
} from '@mnemo/kv-core';
import { transfer, transferOperands, type TransferOperand } from '@mnemo/native-cuda';
import type { ModelKv, OffloadTiers } from './offload.tiers.js';

/** A replica to record in the lookup table. */
type Replica = { seg: SegmentRef; location: SegmentLocation };

/** Where one (chunk, layer) segment is read from during a restore. */
export interface RestoreSource {
  readonly key: string;
  readonly layer: number;
  /** The replica pinned for the whole restore (host if the host held it, else SSD). */
  readonly pinned: PinHandle;
  /** Host copy to read from: the pinned one, or the promotion target of an SSD one. */
  host?: { readonly operand: TransferOperand; readonly offset: number; readonly crc32c: number };
  /** Set when `host` was filled (and its CRC checked) by this restore: no second check needed. */
  verified?: boolean;
  /**
   * A promotion into the host pool not yet checked (ring reads check it on its copy into the
   * payload): it joins the host tier only once that check passed, so the tier never lists
   * bytes nobody verified; freed when the restore ends without it.
   */
  pending?: SegmentLocation;
  /** The scratch buffer `host` lies in, handed back once the layer is copied out. */
  scratch?: ArrayBuffer;
}

type Source = RestoreSource;

/**
 * The SSD side of one restore: segments only the SSD holds are read into the host pool (a
 * promotion: the next turn finds them there), or into scratch when the host pool has no room.
 * Promotions join the host tier only once verified, pinned until the restore ends.
 */
export class HostPromotions {
  /** Host replicas pinned for the restore: promotions it made, and ones another restore made first. */
  readonly pins: PinHandle[] = [];
  /** Host slots read into that another restore promoted first: freed when the restore ends. */
  readonly orphans: SegmentLocation[] = [];

  constructor(
    private readonly tiers: OffloadTiers,
    private readonly m: ModelKv,
    private readonly buffers: RestoreBuffers,
    /** `windows` reads check each segment as it lands; ring reads leave it to the copy out. */
    private readonly checkOnRead: boolean,
    private readonly released: () => boolean,
    private readonly corrupt: (s: Source, tier: PoolTier) => never,
  ) {}

  /**
   * Reads SSD-only segments into host memory in one transfer. Ring reads leave the CRC32C check
   * to the copy into the payload (one fused pass on the copy threads: the device's single I/O
   * thread then only reaps and resubmits — 11–12% faster SSD gets in same-process A/Bs);
   * `windows` reads check each segment on the I/O thread as it lands.
   */
  async read(srcs: Source[]): Promise<void> {
    if (srcs.length === 0) return;
    const m = this.m;
    const plan =
      this.tiers.host.length === 0
        ? undefined
        : planOffload(
            srcs.map((s) => ({ position: 0, s })),
            this.tiers.offloadDevices('mem'),
            m.stride,
          );
    const targets = new Map<Source, { operand: TransferOperand; offset: number; deviceIndex?: number }>();
    for (const w of plan?.writes ?? [])
      w.segments.forEach(({ s }, i) =>
        targets.set(s, { operand: this.tiers.device(w.deviceIndex).device, offset: w.offsets[i]!, deviceIndex: w.deviceIndex }),
      );
    const rest = srcs.filter((s) => !targets.has(s));
    let scratch: ArrayBuffer | undefined;
    if (rest.length > 0) {
      // No host room: a scratch buffer, aligned for O_DIRECT, only until this layer is loaded.
      scratch = this.buffers.scratch(rest.length * m.stride);
      rest.forEach((s, i) => targets.set(s, { operand: scratch!, offset: i * m.stride }));
    }
    const freePlan = () => {
      for (const w of plan?.writes ?? []) for (const x of w.extents) this.tiers.device(w.deviceIndex).allocator.free(x.offset, x.length);
      if (scratch) this.buffers.unused(scratch);
    };
    const { operands, op } = transferOperands();
    const ranges: number[] = [];
    const crcs: number[] = [];
    for (const s of srcs) {
      const t = targets.get(s)!;
      ranges.push(
        op(this.tiers.device(s.pinned.location.deviceIndex).device),
        s.pinned.location.offset,
        op(t.operand),
        t.offset,
        m.ioBytes,
      );
      crcs.push(op(t.operand), t.offset, m.segBytes);
    }
    const checkNow = this.checkOnRead;
    let r;
    try {
      r = await transfer(operands, Float64Array.from(ranges), checkNow ? { crcs: Float64Array.from(crcs) } : undefined);
    } catch (e) {
      freePlan();
      throw new MnemoError(ErrorCode.DataLoss, `SSD read failed: ${(e as Error).message}`);
    }
    this.tiers.counters.readBytes.ssd += srcs.length * m.segBytes;
    if (this.released()) {
      // Released while the read was in flight: its pins are gone, so nothing read may be kept.
      freePlan();
      return;
    }
    const bad = checkNow ? srcs.find((s, i) => r.crcs[i] !== s.pinned.location.crc32c) : undefined;
    if (bad) {
      freePlan();
      this.corrupt(bad, 'ssd');
    }
    const kept: Replica[] = [];
    srcs.forEach((s) => {
      const t = targets.get(s)!;
      s.host = { operand: t.operand, offset: t.offset, crc32c: s.pinned.location.crc32c };
      s.verified = checkNow;
      if (t.deviceIndex === undefined) {
        s.scratch = scratch;
        this.buffers.use(scratch!);
        return;
      }
      const location: SegmentLocation = {
        deviceIndex: t.deviceIndex,
        type: 'mem',
        offset: t.offset,
        length: m.segBytes,
        crc32c: s.pinned.location.crc32c,
      };
      if (!checkNow) s.pending = location;
      else if (m.table.get(s.key, s.layer, 'mem')) this.orphans.push(location);
      else kept.push({ seg: { chunkKey: s.key, position: m.table.positionOf(s.key)!, layer: s.layer }, location });
    });
    this.join(kept);
  }

  /** Promotions the copy just verified join the host tier. */
  keep(srcs: readonly Source[]): void {
    const kept: Replica[] = [];
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
  private join(kept: Replica[]): void {
    this.tiers.put(this.m, kept);
    for (const k of kept) {
      const pin = this.m.table.pin(k.seg.chunkKey, k.seg.layer, 'mem');
      if (pin) this.pins.push(pin);
    }
  }
}
