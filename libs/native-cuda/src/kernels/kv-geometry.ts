// The shapes every kernel backend and the argument checks share (a leaf: it imports nothing).

/** Geometry of the block-major device KV cache `[block][layer][K|V][token][kv_head][head_dim]`. */
export interface KvGeometry {
  readonly numLayers: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  /** Tokens per block (16 in Mnemo). */
  readonly blockSize: number;
}

/** Describes which rows of a packed batch belong to which sequence, for paged attention. */
export interface AttentionBatch {
  readonly numSeqs: number;
  /** [numSeqs + 1]: rows queryStart[s]..queryStart[s+1] of q/out belong to sequence s. */
  readonly queryStart: Int32Array;
  /** [numSeqs]: tokens of sequence s in the cache *including* this batch's new rows. */
  readonly contextLen: Int32Array;
  /** [numSeqs, maxBlocksPerSeq]: physical block ids of each sequence, in token order. */
  readonly blockTables: Int32Array;
  readonly maxBlocksPerSeq: number;
}

/** Elements of one whole block (all layers, K and V) of the cache. */
export function kvBlockElements(geom: KvGeometry): number {
  return geom.numLayers * 2 * geom.blockSize * geom.numKvHeads * geom.headDim;
}
