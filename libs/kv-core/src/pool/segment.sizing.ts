import { CHUNK_TOKENS } from '../keys/chunk.constants.js';

/** Shape of one model's KV cache, as far as the offload tiers care. */
export interface KvGeometry {
  readonly layers: number;
  readonly kvHeads: number;
  readonly headDim: number;
  /** 2 for fp16/bf16, 4 for fp32, 1 for fp8. */
  readonly bytesPerElement: number;
}

/** Throws unless `n` is a positive safe integer (sizes that multiply into byte counts). */
export function assertPositive(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`${name} must be a positive integer, got ${n}`);
}

function assertSafe(name: string, n: number): number {
  if (!Number.isSafeInteger(n)) throw new RangeError(`${name} overflows 2^53: ${n}`);
  return n;
}

/**
 * Bytes of one segment, i.e. one layer of one chunk in the layer-major payload
 * `[layer][K|V][token][kv_head][head_dim]`: `2 · chunkTokens · kvHeads · headDim · bytesPerElement`.
 */
export function segmentBytes(g: KvGeometry, chunkTokens: number = CHUNK_TOKENS): number {
  assertPositive('kvHeads', g.kvHeads);
  assertPositive('headDim', g.headDim);
  assertPositive('bytesPerElement', g.bytesPerElement);
  assertPositive('chunkTokens', chunkTokens);
  return assertSafe('segment bytes', 2 * chunkTokens * g.kvHeads * g.headDim * g.bytesPerElement);
}

/** Bytes of one whole chunk (all layers). */
export function chunkBytes(g: KvGeometry, chunkTokens: number = CHUNK_TOKENS): number {
  assertPositive('layers', g.layers);
  return assertSafe('chunk bytes', g.layers * segmentBytes(g, chunkTokens));
}

/** Smallest multiple of `alignment` that is ≥ `bytes`. */
export function alignUp(bytes: number, alignment: number): number {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new RangeError(`bytes must be a non-negative integer, got ${bytes}`);
  assertPositive('alignment', alignment);
  return assertSafe('aligned bytes', Math.ceil(bytes / alignment) * alignment);
}

/**
 * Distance between consecutive segments packed into one device extent: the segment size
 * rounded up to the device alignment, so every segment starts on a sector (O_DIRECT needs
 * aligned offsets and lengths) and can be read or freed on its own. The extent allocator
 * rounds lengths up the same way, so freeing `(offset, segmentBytes)` releases one stride.
 */
export function segmentStride(segBytes: number, alignment: number): number {
  assertPositive('segment bytes', segBytes);
  return alignUp(segBytes, alignment);
}

/** How many segments of `stride` bytes fit in `capacityBytes` (whole segments only). */
export function segmentsFitting(capacityBytes: number, stride: number): number {
  if (!Number.isSafeInteger(capacityBytes) || capacityBytes < 0) {
    throw new RangeError(`capacity must be a non-negative integer, got ${capacityBytes}`);
  }
  assertPositive('stride', stride);
  return Math.floor(capacityBytes / stride);
}
