import type { DeviceBlockManager } from '@mnemo/kv-core';
import { kernelCall, type KernelBackend, type KernelCall, type KvGeometry } from '@mnemo/native-cuda';

/** lent: a worker's region; local: the master's own region (its regular cache); host: the host pool. */
export type BackingTier = 'lent' | 'local' | 'host';

/**
 * Where a layer-streamed sequence keeps the full-layer KV of its blocks (SwiftCache §3.2): a
 * lender's elastic cache or the host pool. Addressed by *backing slots*: `block · B + offset`,
 * one per token. Reads fill `k`/`v` `[n, kv_heads·head_dim]` on the device, writes take them
 * from there. Both return kernel calls so the stream submits one list per layer (off the JS thread
 * where the backend can); a host backing does its upload while building the list and its
 * download in `finish`, after the list ran.
 */
export interface LayerKvBacking<T> {
  readonly tier: BackingTier;
  /** A block of full-layer storage, or null when this backing is full. */
  allocate(): number | null;
  release(block: number): void;
  readCalls(layer: number, slots: Int32Array, k: T, v: T): KernelCall<T>[];
  writeCalls(layer: number, slots: Int32Array, k: T, v: T): { calls: KernelCall<T>[]; finish?: () => void };
}

/**
 * Master blocks inside a device region — a worker's region lent to the master, or the master's
 * own region kept as its regular cache: the region's cache tensor, viewed as a one-layer cache
 * of the master's geometry (one "pseudo-block" = one master block of one layer, K and V), so the
 * ordinary gather and writeKv kernels move rows in and out. `offsetOf(block)` is the element
 * offset the coordinator assigned that master block (a multiple of a master block's size).
 * NOTE: the lender's own requests never touch these elements: its block manager no longer has
 * the ids that cover them while they are lent.
 */
export class DeviceRegionBacking<T> implements LayerKvBacking<T> {
  private readonly view: KvGeometry;
  private readonly layerBlock: number;
  private readonly rowDim: number;

  constructor(
    private readonly backend: KernelBackend<T>,
    private readonly region: T,
    master: KvGeometry,
    private readonly blocks: DeviceBlockManager,
    private readonly offsetOf: (block: number) => number,
    readonly tier: 'lent' | 'local' = 'lent',
  ) {
    this.view = { ...master, numLayers: 1 };
    this.rowDim = master.numKvHeads * master.headDim;
    this.layerBlock = 2 * master.blockSize * this.rowDim;
  }

  allocate(): number | null {
    return this.blocks.allocate(1)?.[0] ?? null;
  }

  release(block: number): void {
    this.blocks.release([block]);
  }

  readCalls(layer: number, slots: Int32Array, k: T, v: T): KernelCall<T>[] {
    const B = this.view.blockSize;
    const ks = new Int32Array(slots.length);
    const vs = new Int32Array(slots.length);
    slots.forEach((s, i) => {
      const p = this.pseudoBlock(Math.floor(s / B), layer);
      ks[i] = p * 2 * B + (s % B);
      vs[i] = (p * 2 + 1) * B + (s % B);
    });
    return [kernelCall('embedding', k, this.region, ks, this.rowDim), kernelCall('embedding', v, this.region, vs, this.rowDim)];
  }

  writeCalls(layer: number, slots: Int32Array, k: T, v: T): { calls: KernelCall<T>[] } {
    const B = this.view.blockSize;
    const dst = slots.map((s) => this.pseudoBlock(Math.floor(s / B), layer) * B + (s % B));
    return { calls: [kernelCall('writeKv', this.region, k, v, dst, 0, this.view)] };
  }

  private pseudoBlock(block: number, layer: number): number {
    return this.offsetOf(block) / this.layerBlock + layer;
  }
}

/**
 * Full-layer blocks in host memory `[block][layer][K|V][token][kv_head·head_dim]` (the host
 * pool's chunk layout): reads upload, writes download. Slower than a lender's device memory,
 * never refuses while it has blocks.
 */
export class HostBacking<T> implements LayerKvBacking<T> {
  readonly tier = 'host' as const;
  private readonly data: Float32Array;
  private readonly free: number[] = [];
  private readonly rowDim: number;
  private readonly layerBlock: number;
  private readonly B: number;

  constructor(
    private readonly backend: KernelBackend<T>,
    private readonly geom: KvGeometry,
    capacityBlocks: number,
  ) {
    this.rowDim = geom.numKvHeads * geom.headDim;
    this.B = geom.blockSize;
    this.layerBlock = 2 * this.B * this.rowDim;
    this.data = new Float32Array(capacityBlocks * geom.numLayers * this.layerBlock);
    for (let b = capacityBlocks - 1; b >= 0; b--) this.free.push(b);
  }

  allocate(): number | null {
    return this.free.pop() ?? null;
  }

  release(block: number): void {
    this.free.push(block);
  }

  readCalls(layer: number, slots: Int32Array, k: T, v: T): KernelCall<T>[] {
    const hk = new Float32Array(slots.length * this.rowDim);
    const hv = new Float32Array(slots.length * this.rowDim);
    slots.forEach((s, i) => {
      const at = this.row(s, layer);
      hk.set(this.data.subarray(at, at + this.rowDim), i * this.rowDim);
      hv.set(this.data.subarray(at + this.B * this.rowDim, at + (this.B + 1) * this.rowDim), i * this.rowDim);
    });
    this.backend.upload(k, hk);
    this.backend.upload(v, hv);
    return [];
  }

  writeCalls(layer: number, slots: Int32Array, k: T, v: T): { calls: KernelCall<T>[]; finish: () => void } {
    const finish = (): void => {
      const hk = this.backend.download(k, slots.length * this.rowDim);
      const hv = this.backend.download(v, slots.length * this.rowDim);
      slots.forEach((s, i) => {
        const at = this.row(s, layer);
        this.data.set(hk.subarray(i * this.rowDim, (i + 1) * this.rowDim), at);
        this.data.set(hv.subarray(i * this.rowDim, (i + 1) * this.rowDim), at + this.B * this.rowDim);
      });
    };
    return { calls: [], finish };
  }

  /** Element offset of the K row of slot `s` in `layer` (its V row is B rows later). */
  private row(s: number, layer: number): number {
    const block = Math.floor(s / this.B);
    return (block * this.geom.numLayers + layer) * this.layerBlock + (s % this.B) * this.rowDim;
  }
}
