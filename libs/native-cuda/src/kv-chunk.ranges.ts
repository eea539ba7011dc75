import type { KvGeometry } from './kernels/backend.interface.js';
import { rangeError, typeError, ValidationCode } from './native.error.js';
import { TRANSFER_RANGE_FIELDS } from './pool.transfer.js';

/** Where one layer's payload segment of a chunk lives: an operand index and a byte offset. */
export interface KvSegmentPlace {
  operand: number;
  offset: number;
}

export interface KvChunkRangesArgs {
  /** Shape of the device cache; elements are `bytesPerElement` wide (4: the CPU engine's fp32). */
  geometry: KvGeometry;
  bytesPerElement?: number;
  /** Operand index of the device cache and the byte offset of its block 0 in that operand. */
  cache: { operand: number; byteOffset?: number };
  /** Block ids of the chunk, in token order. */
  blocks: ArrayLike<number>;
  /** Tokens in the chunk (default: every block full); only the last block may be partial. */
  tokens?: number;
  /** Layers moved, [start, end) (default all): a layer-wise load moves a few at a time. */
  layers?: { start: number; end: number };
  /** One place per moved layer: `segments[i]` holds layer `layers.start + i`. */
  segments: readonly KvSegmentPlace[];
  /** 'gather': cache → segments (offload); 'scatter': segments → cache (restore). */
  direction: 'gather' | 'scatter';
}

/** Bytes of one layer's payload segment, `[K|V][token][kv_head][head_dim]`, for `tokens` tokens. */
export function kvSegmentBytes(geometry: KvGeometry, tokens: number, bytesPerElement = 4): number {
  return 2 * tokens * geometry.numKvHeads * geometry.headDim * bytesPerElement;
}

function int(name: string, v: unknown, lo: number, hi: number): number {
  if (typeof v !== 'number') throw typeError(`${name} must be a number, got ${typeof v}`);
  if (!Number.isInteger(v) || v < lo || v > hi) throw rangeError(`${name} must be an integer in [${lo}, ${hi}], got ${v}`);
  return v;
}

/**
 * The transfer ranges that move one chunk between the block-major device cache
 * `[block][layer][K|V][token][kv_head][head_dim]` and layer-major payload segments
 * `[K|V][token][kv_head][head_dim]` (one per layer; ARCHITECTURE.md §3), for `transfer()`.
 * One range per (layer, K|V, block): `blockSize × kv_heads × head_dim` elements that are
 * contiguous on both sides. Layout only: where the segments go is the caller's decision.
 */
export function kvChunkRanges(args: KvChunkRangesArgs): Float64Array {
  const g = args.geometry;
  const elem = int('bytesPerElement', args.bytesPerElement ?? 4, 1, 16);
  const L = int('geometry.numLayers', g.numLayers, 1, 1 << 16);
  const B = int('geometry.blockSize', g.blockSize, 1, 1 << 16);
  const row = int('geometry.numKvHeads', g.numKvHeads, 1, 1 << 16) * int('geometry.headDim', g.headDim, 1, 1 << 16) * elem;
  const blocks = args.blocks;
  if (typeof blocks !== 'object' || blocks === null || typeof blocks.length !== 'number')
    throw typeError('blocks must be an array of block ids');
  const n = blocks.length;
  const tokens = int('tokens', args.tokens ?? n * B, 0, n * B);
  if (n > 0 && tokens <= (n - 1) * B) {
    throw rangeError(`tokens ${tokens} leave block ${n - 1} empty; pass only the blocks that hold tokens`, ValidationCode.InvalidArgValue);
  }
  const start = int('layers.start', args.layers?.start ?? 0, 0, L);
  const end = int('layers.end', args.layers?.end ?? L, start, L);
  if (!Array.isArray(args.segments) || args.segments.length !== end - start) {
    throw rangeError(`segments must hold one place per moved layer (${end - start})`, ValidationCode.InvalidArgValue);
  }
  if (args.direction !== 'gather' && args.direction !== 'scatter') {
    throw rangeError(`direction must be 'gather' or 'scatter'`, ValidationCode.InvalidArgValue);
  }
  const cacheOperand = int('cache.operand', args.cache.operand, 0, 2 ** 32 - 1);
  const cacheBase = int('cache.byteOffset', args.cache.byteOffset ?? 0, 0, Number.MAX_SAFE_INTEGER);
  const plane = B * row;
  const out = new Float64Array((end - start) * 2 * n * TRANSFER_RANGE_FIELDS);
  let k = 0;
  for (let l = start; l < end; l++) {
    const seg = args.segments[l - start]!;
    const segOperand = int(`segments[${l - start}].operand`, seg.operand, 0, 2 ** 32 - 1);
    const segOffset = int(`segments[${l - start}].offset`, seg.offset, 0, Number.MAX_SAFE_INTEGER);
    for (let kv = 0; kv < 2; kv++) {
      for (let i = 0; i < n; i++) {
        const block = int(`blocks[${i}]`, blocks[i], 0, Number.MAX_SAFE_INTEGER);
        const length = Math.min(B, tokens - i * B) * row;
        const cacheOffset = cacheBase + ((block * L + l) * 2 + kv) * plane;
        const payloadOffset = segOffset + (kv * tokens + i * B) * row;
        if (args.direction === 'gather') {
          out.set([cacheOperand, cacheOffset, segOperand, payloadOffset, length], k);
        } else {
          out.set([segOperand, payloadOffset, cacheOperand, cacheOffset, length], k);
        }
        k += TRANSFER_RANGE_FIELDS;
      }
    }
  }
  return out;
}
