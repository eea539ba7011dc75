import { LookupTable, segmentBytes, segmentStride, type KvRowGeometry } from '@mnemo/kv-core';
import { POOL_ALIGNMENT } from './pool.devices.js';
import type { SsdJournalFile } from './ssd-journal.file.js';

/**
 * What the offload tiers keep per model: its KV geometry, the sizes that follow from it, and
 * its lookup table (one per geometry: segment sizes differ between models). A segment is one
 * layer of one 256-token chunk, fp32, `[K|V][token][kv_head][head_dim]`.
 */
export class ModelKv {
  readonly table: LookupTable;
  /** Bytes of one segment's payload. */
  readonly segBytes: number;
  /** Bytes a segment takes in a pool device (rounded up to the pool alignment). */
  readonly stride: number;
  journal?: SsdJournalFile;

  constructor(
    readonly model: string,
    readonly geometry: KvRowGeometry,
    ttlMs: number,
  ) {
    this.table = new LookupTable({ numLayers: geometry.layers, ttlMs });
    this.segBytes = segmentBytes({ layers: geometry.layers, kvHeads: 1, headDim: geometry.rowElems, bytesPerElement: 4 });
    this.stride = segmentStride(this.segBytes, POOL_ALIGNMENT);
  }
}
