import { rangeError, typeError, ValidationCode } from '../native.error.js';
import { type AttentionBatch, type KvGeometry, kvBlockElements } from './kv-geometry.js';

/**
 * Argument checks shared by both kernel backends. They see tensors only as element counts,
 * so the cpu (Float32Array) and cuda (DeviceTensor) wrappers run the very same rules; the
 * native side re-checks as an assertion. Every failure is a TypeError or RangeError with a
 * Node-style `code` naming the offending argument.
 */

/** Sizes above this are refused: far beyond any tensor we allocate, and exact in a double. */
const MAX_SIZE = 2 ** 40;

export function requireSize(name: string, v: number, min = 0): number {
  if (typeof v !== 'number') throw typeError(`${name} must be a number, got ${typeof v}`);
  if (!Number.isInteger(v) || v < min || v > MAX_SIZE) throw rangeError(`${name} must be an integer >= ${min}, got ${v}`);
  return v;
}

export function requireFinite(name: string, v: number): number {
  if (typeof v !== 'number') throw typeError(`${name} must be a number, got ${typeof v}`);
  if (!Number.isFinite(v)) throw rangeError(`${name} must be finite, got ${v}`, ValidationCode.InvalidArgValue);
  return v;
}

export function requireInt32Array(name: string, a: Int32Array): Int32Array {
  if (!(a instanceof Int32Array)) throw typeError(`${name} must be an Int32Array`);
  return a;
}

export function requireFloat32Array(name: string, a: Float32Array): Float32Array {
  if (!(a instanceof Float32Array)) throw typeError(`${name} must be a Float32Array`);
  return a;
}

/** `have` (elements of a tensor) must be at least `need`. */
export function requireElements(name: string, have: number, need: number): void {
  if (have < need) throw rangeError(`${name} holds ${have} elements, needs ${need}`);
}

function requireIndices(name: string, a: Int32Array, limit: number, allowNegative = false): void {
  for (let i = 0; i < a.length; i++) {
    const v = a[i]!;
    if ((v < 0 && !allowNegative) || v >= limit) throw rangeError(`${name}[${i}] = ${v} is outside [0, ${limit})`);
  }
}

export function validateGeometry(geom: KvGeometry): void {
  if (geom === null || typeof geom !== 'object') throw typeError('geom must be a KvGeometry object');
  requireSize('geom.numLayers', geom.numLayers, 1);
  requireSize('geom.numKvHeads', geom.numKvHeads, 1);
  requireSize('geom.headDim', geom.headDim, 1);
  requireSize('geom.blockSize', geom.blockSize, 1);
}

/** Number of blocks a cache tensor of `elements` holds; it must be a whole number. */
export function cacheBlocks(elements: number, geom: KvGeometry): number {
  validateGeometry(geom);
  const per = kvBlockElements(geom);
  if (elements % per !== 0) {
    throw rangeError(`cache holds ${elements} elements, not a whole number of ${per}-element blocks`, ValidationCode.InvalidArgValue);
  }
  return elements / per;
}

/** Checks an AttentionBatch against the cache; returns the number of q/out rows. */
export function validateBatch(batch: AttentionBatch, geom: KvGeometry, numBlocks: number): number {
  if (batch === null || typeof batch !== 'object') throw typeError('batch must be an AttentionBatch object');
  const numSeqs = requireSize('batch.numSeqs', batch.numSeqs);
  const maxBlocks = requireSize('batch.maxBlocksPerSeq', batch.maxBlocksPerSeq);
  const qs = requireInt32Array('batch.queryStart', batch.queryStart);
  const ctx = requireInt32Array('batch.contextLen', batch.contextLen);
  const tables = requireInt32Array('batch.blockTables', batch.blockTables);
  requireElements('batch.queryStart', qs.length, numSeqs + 1);
  requireElements('batch.contextLen', ctx.length, numSeqs);
  requireElements('batch.blockTables', tables.length, numSeqs * maxBlocks);
  if (qs[0] !== 0) throw rangeError(`batch.queryStart[0] must be 0, got ${qs[0]}`);
  for (let s = 0; s < numSeqs; s++) {
    const qLen = qs[s + 1]! - qs[s]!;
    if (qLen < 0) throw rangeError(`batch.queryStart must not decrease (sequence ${s})`);
    if (ctx[s]! < qLen) throw rangeError(`batch.contextLen[${s}] = ${ctx[s]} is shorter than its ${qLen} query rows`);
    const blocks = Math.ceil(ctx[s]! / geom.blockSize);
    if (blocks > maxBlocks) throw rangeError(`sequence ${s} needs ${blocks} blocks, maxBlocksPerSeq is ${maxBlocks}`);
    requireIndices(`batch.blockTables (sequence ${s})`, tables.subarray(s * maxBlocks, s * maxBlocks + blocks), numBlocks);
  }
  return qs[numSeqs]!;
}

/**
 * `rows` rows of `n` in out and x, plus a vector of n applied to every row (rmsnorm's weight,
 * addBias's bias).
 */
function requireRowsAndVector(
  out: number,
  x: number,
  rows: number,
  [nName, n, nMin]: readonly [string, number, number],
  [vectorName, vector]: readonly [string, number],
): void {
  requireSize('rows', rows);
  requireSize(nName, n, nMin);
  requireElements('out', out, rows * n);
  requireElements('x', x, rows * n);
  requireElements(vectorName, vector, n);
}

/** Per-op checks: tensors are passed as element counts. */
export const checkArgs = {
  embedding(out: number, table: number, ids: Int32Array, dim: number): void {
    requireInt32Array('ids', ids);
    requireSize('dim', dim, 1);
    requireElements('out', out, ids.length * dim);
    requireIndices('ids', ids, Math.floor(table / dim));
  },
  rmsnorm(out: number, x: number, weight: number, rows: number, dim: number, eps: number): void {
    requireFinite('eps', eps);
    requireRowsAndVector(out, x, rows, ['dim', dim, 1], ['weight', weight]);
  },
  matmul(out: number, x: number, w: number, m: number, n: number, k: number): void {
    requireSize('m', m);
    requireSize('n', n);
    requireSize('k', k);
    requireElements('out', out, m * n);
    requireElements('x', x, m * k);
    requireElements('w', w, n * k);
  },
  rope(x: number, positions: Int32Array, rows: number, numHeads: number, headDim: number, theta: number): void {
    requireInt32Array('positions', positions);
    requireSize('rows', rows);
    requireSize('numHeads', numHeads);
    requireSize('headDim', headDim, 2);
    if (headDim % 2 !== 0) throw rangeError(`headDim must be even, got ${headDim}`, ValidationCode.InvalidArgValue);
    if (!(requireFinite('theta', theta) > 0)) throw rangeError(`theta must be positive, got ${theta}`);
    requireElements('positions', positions.length, rows);
    requireElements('x', x, rows * numHeads * headDim);
    requireIndices('positions', positions.subarray(0, rows), 2 ** 31 - 1);
  },
  elementwise(out: number, a: number, b: number, n: number): void {
    requireSize('n', n);
    requireElements('out', out, n);
    requireElements('a', a, n);
    requireElements('b', b, n);
  },
  addBias(out: number, x: number, bias: number, rows: number, n: number): void {
    requireRowsAndVector(out, x, rows, ['n', n, 0], ['bias', bias]);
  },
  writeKv(cache: number, k: number, v: number, slots: Int32Array, layer: number, geom: KvGeometry): void {
    requireInt32Array('slots', slots);
    const numBlocks = cacheBlocks(cache, geom);
    requireSize('layer', layer);
    if (layer >= geom.numLayers) throw rangeError(`layer ${layer} is outside [0, ${geom.numLayers})`);
    const rowElems = geom.numKvHeads * geom.headDim;
    requireElements('k', k, slots.length * rowElems);
    requireElements('v', v, slots.length * rowElems);
    requireIndices('slots', slots, numBlocks * geom.blockSize, true);
  },
  pagedAttention(
    out: number,
    q: number,
    cache: number,
    layer: number,
    numHeads: number,
    geom: KvGeometry,
    batch: AttentionBatch,
    scale: number,
  ): void {
    const numBlocks = cacheBlocks(cache, geom);
    requireSize('layer', layer);
    if (layer >= geom.numLayers) throw rangeError(`layer ${layer} is outside [0, ${geom.numLayers})`);
    requireSize('numHeads', numHeads, 1);
    if (numHeads % geom.numKvHeads !== 0) {
      throw rangeError(`numHeads ${numHeads} is not a multiple of numKvHeads ${geom.numKvHeads}`, ValidationCode.InvalidArgValue);
    }
    requireFinite('scale', scale);
    const rows = validateBatch(batch, geom, numBlocks);
    requireElements('q', q, rows * numHeads * geom.headDim);
    requireElements('out', out, rows * numHeads * geom.headDim);
  },
  copyBlocks(cache: number, src: Int32Array, dst: Int32Array, geom: KvGeometry): void {
    requireInt32Array('src', src);
    requireInt32Array('dst', dst);
    const numBlocks = cacheBlocks(cache, geom);
    if (src.length !== dst.length) throw rangeError(`src has ${src.length} blocks, dst ${dst.length}`, ValidationCode.InvalidArgValue);
    requireIndices('src', src, numBlocks);
    requireIndices('dst', dst, numBlocks);
  },
  packWeight(out: number, w: number, n: number, k: number): void {
    requireSize('n', n);
    requireSize('k', k);
    requireElements('w', w, n * k);
    requireElements('out', out, n * k);
  },
  argmax(out: Int32Array, x: number, rows: number, n: number): void {
    requireInt32Array('out', out);
    checkArgs.rowwise(x, rows, n);
    requireElements('out', out.length, rows);
  },
  softmax(out: number, x: number, rows: number, n: number, scale: number): void {
    checkArgs.rowwise(x, rows, n, out);
    requireFinite('scale', scale);
  },
  rowwise(x: number, rows: number, n: number, out?: number): void {
    requireSize('rows', rows);
    requireSize('n', n, 1);
    if (n > 2 ** 31 - 1) throw rangeError(`n must fit an Int32, got ${n}`);
    requireElements('x', x, rows * n);
    if (out !== undefined) requireElements('out', out, rows * n);
  },
};
