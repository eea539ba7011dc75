/**
 * The arithmetic of SwiftCache's elastic cache (§3.2 Eq. 1–5, §3.4 Eq. 6–9). Pure functions over
 * model KV shapes; sizes are counted in elements (the caller multiplies by its dtype size).
 */
import { assertPositive } from '../pool/segment.sizing.js';

/** The KV shape of one model's paged cache. */
export interface KvShape {
  readonly layers: number;
  /** Tokens per block. */
  readonly blockTokens: number;
  readonly kvHeads: number;
  readonly headDim: number;
}

function checkShape(s: KvShape): void {
  assertPositive('layers', s.layers);
  assertPositive('blockTokens', s.blockTokens);
  assertPositive('kvHeads', s.kvHeads);
  assertPositive('headDim', s.headDim);
}

/**
 * Elements of one whole block in block-major layout, K and V of every layer: Eq. 6/7 times 2
 * (the paper leaves the K|V factor out of BE; keeping it in both models changes no ratio).
 */
export function blockElements(s: KvShape): number {
  checkShape(s);
  return 2 * s.layers * s.blockTokens * s.kvHeads * s.headDim;
}

/** Elements of one block of one layer, K and V (Eq. 1 without the dtype factor). */
export function layerBlockElements(s: KvShape): number {
  checkShape(s);
  return 2 * s.blockTokens * s.kvHeads * s.headDim;
}

export function gcd(a: number, b: number): number {
  assertPositive('a', a);
  assertPositive('b', b);
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/** Least common multiple; RangeError when it leaves the safe-integer range. */
export function lcm(a: number, b: number): number {
  const m = (a / gcd(a, b)) * b;
  if (!Number.isSafeInteger(m)) throw new RangeError(`lcm(${a}, ${b}) is not a safe integer`);
  return m;
}

/** One master ↔ worker pairing's minimum elastic unit (Eq. 8–9). */
export interface ElasticUnit {
  /** LCM_elem: elements moved by one unit; a whole number of blocks of both models. */
  readonly elements: number;
  /** MEU_m: master blocks per unit. */
  readonly masterBlocks: number;
  /** MEU_i: worker blocks per unit. */
  readonly workerBlocks: number;
}

export function minimumElasticUnit(master: KvShape, worker: KvShape): ElasticUnit {
  const bm = blockElements(master);
  const bw = blockElements(worker);
  const elements = lcm(bm, bw);
  return { elements, masterBlocks: elements / bm, workerBlocks: elements / bw };
}

/** What the master's local memory holds under a layer stream cache (Eq. 2–5). */
export interface LayerStreamSplit {
  /** K_i per worker: master full-layer blocks its lent memory stores (Eq. 2). */
  readonly workerFullBlocks: readonly number[];
  /** K_master: single-layer blocks the master's local memory stores (Eq. 3). */
  readonly masterLayerBlocks: number;
  /** N_LSC: single-layer blocks of the layer stream cache (Eq. 4). */
  readonly streamBlocks: number;
  /** N_RC: full-layer blocks of the regular cache (Eq. 5). */
  readonly regularBlocks: number;
  /** (N_LSC + N_RC) · B: the longest context the master can hold. */
  readonly maxContextTokens: number;
}

/**
 * Eq. 2–5. `masterElements` is the master's local KV memory and `lentElements` each worker's
 * memory lent to it, in elements. A context of N_LSC blocks streams through the LSC one layer at a
 * time (its full-layer copy lives in lent memory), N_RC more stay local with every layer.
 */
export function layerStreamSplit(master: KvShape, masterElements: number, lentElements: readonly number[]): LayerStreamSplit {
  const mBlock = layerBlockElements(master);
  for (const c of [masterElements, ...lentElements]) {
    if (!Number.isSafeInteger(c) || c < 0) throw new RangeError(`memory sizes must be non-negative integers, got ${c}`);
  }
  const workerFullBlocks = lentElements.map((c) => Math.floor(c / (mBlock * master.layers)));
  const lent = workerFullBlocks.reduce((a, b) => a + b, 0);
  const masterLayerBlocks = Math.floor(masterElements / mBlock);
  const streamBlocks = Math.min(lent, masterLayerBlocks);
  const regularBlocks = Math.floor((masterLayerBlocks - streamBlocks) / master.layers);
  return {
    workerFullBlocks,
    masterLayerBlocks,
    streamBlocks,
    regularBlocks,
    maxContextTokens: (streamBlocks + regularBlocks) * master.blockTokens,
  };
}

/** How a master's local memory is laid out for one long context streamed with a prefetch window. */
export interface StreamedContextPlan {
  /** Blocks of the context (each plane of the stream holds all of them for one layer). */
  readonly contextBlocks: number;
  /** Of those, full-layer blocks kept in local memory (the regular cache, Eq. 5's role). */
  readonly regularBlocks: number;
  /** Of those, full-layer blocks kept in lenders' memory. */
  readonly lentBlocks: number;
  /** Local elements used: `contextBlocks · window` single-layer blocks + `regularBlocks` full blocks. */
  readonly localElements: number;
}

/**
 * Eq. 3–5 for a stream that keeps `window` layers resident (the active one and the prefetched
 * ones) instead of one: the longest context whose planes and regular blocks fit in
 * `localElements`, with `lentFullBlocks` master blocks available in lenders. With K single-layer
 * blocks of local memory, W the window and L the layers: a context of c = lent + r blocks needs
 * c·W + r·L ≤ K, so r = ⌊(K − W·lent)/(W + L)⌋ when lenders cannot fill the planes alone, else
 * c = ⌊K/W⌋ entirely from lenders.
 */
export function streamedContextPlan(master: KvShape, localElements: number, lentFullBlocks: number, window: number): StreamedContextPlan {
  const layerBlock = layerBlockElements(master);
  if (!Number.isSafeInteger(localElements) || localElements < 0)
    throw new RangeError(`local memory must be a non-negative integer, got ${localElements}`);
  if (!Number.isSafeInteger(lentFullBlocks) || lentFullBlocks < 0)
    throw new RangeError(`lent blocks must be a non-negative integer, got ${lentFullBlocks}`);
  if (!Number.isSafeInteger(window) || window < 1 || window > master.layers)
    throw new RangeError(`window must be in [1, ${master.layers}], got ${window}`);
  const K = Math.floor(localElements / layerBlock);
  const L = master.layers;
  const regularBlocks = K > window * lentFullBlocks ? Math.floor((K - window * lentFullBlocks) / (window + L)) : 0;
  const lentBlocks = Math.min(lentFullBlocks, Math.floor(K / window));
  const contextBlocks = lentBlocks + regularBlocks;
  return { contextBlocks, regularBlocks, lentBlocks, localElements: (contextBlocks * window + regularBlocks * L) * layerBlock };
}
