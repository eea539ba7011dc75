/** A node's load as last reported in its heartbeat; the scheduler's soft state. */
export interface NodeLoad {
  nodeId: string;
  /** Model ids this node can serve now. */
  models: string[];
  /** Sequences in the node's current batch. */
  running: number;
  /** Sequences queued at the node, not yet admitted. */
  waiting: number;
  /** Fraction of the device KV cache in use, 0..1. */
  kvUsage: number;
  /** Scheduler clock (ms) when the last heartbeat arrived. */
  lastSeenMs: number;
}
