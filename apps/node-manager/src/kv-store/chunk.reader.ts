import type { PinHandle } from '@mnemo/kv-core';
import { allocHostBuffer, transfer, transferOperands } from '@mnemo/native-cuda';
import type { ModelKv, OffloadTiers } from './offload.tiers.js';

/** Layers [layerStart, layerEnd) of one chunk as the tiers hold it, verified. */
export interface ChunkSlice {
  readonly model: string;
  /** `[layer][K|V][256][row]` for the layer range (fp32). */
  readonly payload: Float32Array;
}

/**
 * Reads a layer range of one chunk out of the offload tiers for a peer (ChunkTransfer): every
 * segment is pinned while it is copied (host replica preferred, else SSD), the whole range
 * moves in one native transfer, and each segment's CRC32C — taken on the bytes copied — must
 * match the one recorded when it was written. Undefined when some layer is not held or fails
 * its check (that replica is dropped): the peer sees a miss and recomputes. Which replicas:
 * kv-core's TierLedger.pinSlice.
 */
export async function readChunkSlice(
  tiers: OffloadTiers,
  key: string,
  layerStart: number,
  layerEnd: number,
): Promise<ChunkSlice | undefined> {
  const slice = tiers.pinSlice(key, layerStart, layerEnd);
  if (!slice) return undefined;
  try {
    return await copyPinned(tiers, slice.m, key, layerStart, slice.pins);
  } finally {
    tiers.unpin(slice.m, slice.pins);
  }
}

async function copyPinned(
  tiers: OffloadTiers,
  m: ModelKv,
  key: string,
  layerStart: number,
  pins: readonly PinHandle[],
): Promise<ChunkSlice | undefined> {
  // Aligned slots: an SSD read is O_DIRECT and moves whole sectors.
  const dst = allocHostBuffer(pins.length * m.stride);
  const { operands, op } = transferOperands(dst);
  const ranges: number[] = [];
  const crcs: number[] = [];
  pins.forEach((p, i) => {
    const loc = p.location;
    ranges.push(op(tiers.device(loc.deviceIndex).device), loc.offset, 0, i * m.stride, loc.type === 'ssd' ? m.ioBytes : m.segBytes);
    crcs.push(0, i * m.stride, m.segBytes);
  });
  const r = await transfer(operands, Float64Array.from(ranges), { crcs: Float64Array.from(crcs) });
  for (const [i, p] of pins.entries()) {
    tiers.counters.readBytes[p.location.type] += m.segBytes;
    if (r.crcs[i] !== p.location.crc32c) {
      tiers.dropCorrupt(m, key, layerStart + i, p.location.type);
      return undefined;
    }
  }
  const payload = new Float32Array(pins.length * (m.segBytes / 4));
  const src = new Uint8Array(dst);
  const out = new Uint8Array(payload.buffer);
  for (let i = 0; i < pins.length; i++) out.set(src.subarray(i * m.stride, i * m.stride + m.segBytes), i * m.segBytes);
  return { model: m.model, payload };
}
