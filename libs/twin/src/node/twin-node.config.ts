import type { MeasuredCosts } from '@mnemo/kv-core';
// What a twin node is given: its configuration (what NODE_* sets on a live node), its costs and
// its place in the cluster's network.
import type { FairnessOptions } from '@mnemo/kv-core';
import type { EventQueue } from '../core/event.queue.js';
import type { ComputeModel } from '../costs/compute.port.js';
import type { ServiceOverheads } from '../costs/overhead.port.js';
import type { SeededRng } from '../core/seeded.rng.js';
import type { TransferLink } from '../costs/transfer.port.js';
import type { RestoreLinks } from './twin-restores.js';
import type { TwinTierConfig, TwinTiers } from './twin-tiers.js';
import type { TwinSeq } from './twin-seq.js';
import type { HoldingChange, TwinSessionTail } from './node-kv.js';

/** One node's configuration: what NODE_* sets on a live node, for the one model it serves; its offload tiers as TwinTierConfig. */
export interface TwinNodeConfig extends TwinTierConfig {
  readonly id: string;
  readonly model: string;
  readonly eosTokenId: number;
  readonly maxContext: number;
  /** Device KV blocks of 16 tokens. */
  readonly kvBlocks: number;
  readonly maxBatch: number;
  readonly maxPrefillTokens: number;
  readonly maxWaiting: number;
  readonly prefixCache: boolean;
  /** Most cached device blocks kept for reuse (0: InferCept's swap-out between turns); Infinity: unbounded. */
  readonly prefixCacheBlocks: number;
  readonly heartbeatMs: number;
  /** A request leaving sends a heartbeat at once, then at most one per this period (NODE_FINISH_BEAT_MS; 0: periodic only). */
  readonly finishBeatMs: number;
  readonly kvEventsMs: number;
  /** Bytes of one token's KV (all `layers`). */
  readonly kvBytesPerToken: number;
  readonly promote: boolean;
  readonly prefetchTtlMs: number;
  readonly maxAdvisories: number;
  readonly warm: boolean;
  /** NODE_SCHEDULING: FCFS continuous batching, or FastSwitch's preemptive priority scheduling with a fair ranker. Default fcfs. */
  readonly scheduling?: 'fcfs' | 'priority';
  readonly fairness?: FairnessOptions;
  /** NODE_HOLD_LONG_PROMPTS: under FCFS a long prompt leads the next prefill pass instead of holding this one's shorter prompts. */
  readonly holdLongPrompts?: boolean;
}

/** What a node's calls cost. */
export interface TwinNodeCosts {
  readonly compute: ComputeModel;
  readonly links: RestoreLinks & { readonly hostWrite: TransferLink; readonly ssdWrite: TransferLink };
  readonly overheads: ServiceOverheads;
}

/** What the node needs of the cluster around it. */
export interface TwinNodeNet {
  readonly events: EventQueue;
  readonly rng: SeededRng;
  peerTiers(nodeId: string): TwinTiers | undefined;
  /** The first token (or an error) of a request leaves the node now. */
  firstToken(seq: TwinSeq, now: number): void;
  /** The request's last event leaves the node now. */
  finished(seq: TwinSeq, now: number): void;
  publishKv(nodeId: string, changes: readonly HoldingChange[], tails: readonly TwinSessionTail[]): void;
  heartbeat(nodeId: string, load: TwinNodeLoad): void;
  /** Each engine call the node makes (tests and traces): its kind and the sequences in it. */
  onStep?(nodeId: string, kind: 'prefill' | 'resume' | 'decode', seqIds: readonly string[]): void;
}

/** A node's heartbeat: its load, and the costs it measured of itself (absent: not measured yet). */
export interface TwinNodeLoad {
  readonly running: number;
  readonly waiting: number;
  readonly kvUsage: number;
  readonly costs?: MeasuredCosts;
  /** The node's batch size (NODE_MAX_BATCH). */
  readonly maxBatch?: number;
  /** Expected time left of its prefill pass in flight, ms (kv-core NodeLoad.prefillBusyMs). */
  readonly prefillBusyMs?: number;
}
