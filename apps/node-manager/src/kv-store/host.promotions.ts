import { ErrorCode, MnemoError, PromotionBooks, type PoolTier, type PromotedSegment, type RestoreBuffers } from '@mnemo/kv-core';
import { transfer, transferOperands, type TransferOperand } from '@mnemo/native-cuda';
import type { ModelKv, OffloadTiers } from './offload.tiers.js';
import type { PoolDevice } from './pool.devices.js';
import type { SsdJournalFile } from './ssd-journal.file.js';

/** Where one (chunk, layer) segment is read from during a restore. */
export interface RestoreSource extends PromotedSegment {
  /** Host copy to read from: the pinned one, or the promotion target of an SSD one. */
  host?: { readonly operand: TransferOperand; readonly offset: number; readonly crc32c: number };
  /** Set when `host` was filled (and its CRC checked) by this restore: no second check needed. */
  verified?: boolean;
  /** The scratch buffer `host` lies in, handed back once the layer is copied out. */
  scratch?: ArrayBuffer;
}

type Source = RestoreSource;

/**
 * The SSD side of one restore: segments only the SSD holds are read into the host pool (a
 * promotion: the next turn finds them there), or into scratch when the host pool has no room.
 * Where each lands and which copies join the host tier are kv-core's {@link PromotionBooks}.
 */
export class HostPromotions extends PromotionBooks<Source, PoolDevice, SsdJournalFile> {
  constructor(
    private readonly tiers: OffloadTiers,
    m: ModelKv,
    private readonly buffers: RestoreBuffers,
    /** `windows` reads check each segment as it lands; ring reads leave it to the copy out. */
    private readonly checkOnRead: boolean,
    private readonly released: () => boolean,
    private readonly corrupt: (s: Source, tier: PoolTier) => never,
  ) {
    super(tiers, m);
  }

  /**
   * Reads SSD-only segments into host memory in one transfer. Ring reads leave the CRC32C check
   * to the copy into the payload (one fused pass on the copy threads: the device's single I/O
   * thread then only reaps and resubmits — 11–12% faster SSD gets in same-process A/Bs);
   * `windows` reads check each segment on the I/O thread as it lands.
   */
  async read(srcs: Source[]): Promise<void> {
    if (srcs.length === 0) return;
    const m = this.m;
    const plan = this.plan(srcs);
    // No host room: a scratch buffer, aligned for O_DIRECT, only until this layer is loaded.
    const scratch = plan.scratchSegments > 0 ? this.buffers.scratch(plan.scratchSegments * m.stride) : undefined;
    const operandOf = (s: Source) => {
      const { deviceIndex } = plan.targets.get(s)!;
      return deviceIndex === undefined ? scratch! : this.tiers.device(deviceIndex).device;
    };
    const freePlan = () => {
      this.unplan(plan);
      if (scratch) this.buffers.unused(scratch);
    };
    const { operands, op } = transferOperands();
    const ranges: number[] = [];
    const crcs: number[] = [];
    for (const s of srcs) {
      const { offset } = plan.targets.get(s)!;
      ranges.push(
        op(this.tiers.device(s.pinned.location.deviceIndex).device),
        s.pinned.location.offset,
        op(operandOf(s)),
        offset,
        m.ioBytes,
      );
      crcs.push(op(operandOf(s)), offset, m.segBytes);
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
    for (const s of srcs) {
      s.host = { operand: operandOf(s), offset: plan.targets.get(s)!.offset, crc32c: s.pinned.location.crc32c };
      s.verified = checkNow;
      if (plan.targets.get(s)!.deviceIndex !== undefined) continue;
      s.scratch = scratch;
      this.buffers.use(scratch!);
    }
    this.landed(srcs, plan, checkNow);
  }
}
