/** What a prefill may be handed besides its prompt: another tier's KV, or a base model's. */

/**
 * Prompt positions [0, until) prefilled under a reuse pattern (recompute [0, r1) and
 * [u1, r2), reuse the base's KV elsewhere) with `load(layer)` giving the base model's KV of
 * those positions; the rest of the prompt is then computed normally. A declared
 * approximation: the engine keeps such a sequence out of prefix sharing (its KV is not the
 * model's own), so nothing it computes is ever served as this model's cached KV.
 */
export interface CrossModelPlan {
  readonly baseModel: string;
  readonly pattern: { readonly r1: number; readonly u1: number; readonly r2: number };
  /** End of the reused positions; at most the prompt length - 1. */
  readonly until: number;
  /** The base's KV of one reused layer for positions [0, until), layout `[K|V][token][kv_head][head_dim]`. */
  load(layer: number): Promise<Float32Array>;
  /** The base's hidden state entering `layer` for [0, until) (`[token][d_model]`); needed when the pattern has a transition layer. */
  loadE?(layer: number): Promise<Float32Array>;
  /** Called once after the pass, whatever happened. */
  done?(ok: boolean): void;
}

/**
 * Where one layer of a restore goes in an engine's host-resident KV memory: the K row of position
 * `from + i` at byte `kOffsets[i]` of `buffer`, its V row at `vOffsets[i]`, each `rowBytes` long.
 * Rows of consecutive positions within a block are adjacent, so a plan can copy runs of them.
 * A negative offset leaves that row out (the engine holds it already, in a shared block).
 */
export interface KvRestoreTarget {
  readonly buffer: ArrayBuffer;
  readonly kOffsets: Float64Array;
  readonly vOffsets: Float64Array;
  readonly rowBytes: number;
}

/**
 * KV of prompt positions [deviceTokens, until) brought back from another tier, layer by layer
 * while the pass computes: `load(l)` is started while layer l-1 runs and awaited just before
 * layer l, so only the part compute did not hide is blocked time. A rejected load fails the
 * prefill and nothing of it is kept (a corrupt copy is a miss, never wrong tokens).
 */
export interface KvRestorePlan {
  /** End of the restored positions; at most the prompt length - 1 (one row computes the logits). */
  readonly until: number;
  /**
   * Layer `layer` of the restored positions, chunk payload layout `[K|V][token][kv_head][head_dim]`.
   * The array may be reused by the plan: it stays valid until the load of layer `layer + 2`
   * (engines import each layer before they ask for the next).
   */
  load(layer: number): Promise<Float32Array>;
  /**
   * Optional: copies layer `layer` of the restored positions straight into the engine's KV memory
   * where that memory is host memory (the CPU backend), so there is no payload to copy again.
   * Resolves once every row is written and checked, as {@link load} does.
   */
  loadInto?(layer: number, target: KvRestoreTarget): Promise<void>;
  /**
   * Called once after the pass, whatever happened, so the plan can let go of what it holds;
   * `blockedMs` is how long the pass waited on loads after its compute ran out (blocked I/O).
   */
  done?(ok: boolean, blockedMs?: number): void;
  /** Optional: where the restored positions come from, in tokens (for records and traces; read before `done`). */
  sources?(): RestoreSources;
}

/** Tokens of a restore by where they are read: this node's host and SSD pools, or another node. */
export interface RestoreSources {
  readonly host: number;
  readonly ssd: number;
  readonly peer: number;
  /** The node (its gRPC address) a peer restore reads from. */
  readonly peerAddress?: string;
}
