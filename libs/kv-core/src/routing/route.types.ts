import type { ChunkHolding, DirectoryTier, NodePrefix } from '../directory/kv-directory.types.js';
import type { NodeLoad } from './node-load.js';

/** The routing policies SCHEDULER_POLICY names: Symphony's and the baselines it is measured against. */
export const ROUTING_POLICIES = ['symphony', 'recompute', 'sticky', 'prefix-affinity', 'llmd', 'conductor'] as const;
export type RoutingPolicyName = (typeof ROUTING_POLICIES)[number];

/** A live node as routing sees it. */
export interface RouteCandidate extends NodeLoad {
  /** Live advisory reservations held on this node (requests announced, not arrived yet). */
  readonly reservations: number;
  /** Prefill work sent to the node and not worked through yet, ms (see PrefillBacklog). */
  readonly backlogMs?: number;
}

/** What routing knows about one request. */
export interface RouteRequest {
  readonly model: string;
  /** The request's chunk keys, in prefix order. */
  readonly chunkKeys: readonly string[];
  /** Per node: the leading chunk keys it holds and in which tier (KvDirectory.prefixes). */
  readonly prefixes: readonly NodePrefix[];
  /** The node the session's previous request ran on, if known. */
  readonly sessionHome?: string;
  /**
   * Prompt length in tokens, when known. The tokens past the last whole chunk have no chunk key,
   * so no other node can be sent them; only the session's home may still hold them (its device
   * prefix cache keeps 16-token blocks).
   */
  readonly promptTokens?: number;
  /**
   * Who holds (host or SSD) the longest partial chunk of the prompt's tail — the part of the
   * session's last turn past a whole chunk — when anyone does: a node other than the home can
   * fetch it instead of recomputing the tail.
   */
  readonly partialHolders?: readonly ChunkHolding[];
  /** The node a live advisory reserved for this session, if any. */
  readonly reservedNode?: string;
}

/** Why a node was chosen (a metric label). */
export type RouteReason =
  'least_loaded' | 'reservation' | 'session_home' | 'moved_queue' | 'moved_kv' | 'longest_prefix' | 'cheapest' | 'scored';

/** Every RouteReason (metric label values). */
export const ROUTE_REASONS: readonly RouteReason[] = [
  'least_loaded',
  'reservation',
  'session_home',
  'moved_queue',
  'moved_kv',
  'longest_prefix',
  'cheapest',
  'scored',
];

/** One candidate's estimated time to first token, ms: its queue, and having the prompt's KV (loads, fetches, recompute). */
export interface CandidateEstimate {
  readonly nodeId: string;
  readonly queueMs: number;
  readonly kvMs: number;
  readonly totalMs: number;
}

/** Chunks the chosen node lacks and a peer holds: the node may fetch them instead of recomputing. */
export interface KvSourcePlan {
  readonly nodeId: string;
  readonly chunkKeys: readonly string[];
}

export interface RouteDecision {
  readonly nodeId: string;
  readonly reason: RouteReason;
  readonly kvSources: readonly KvSourcePlan[];
  /** The estimated time to first token on the chosen node, ms (0 for policies that do not estimate). */
  readonly estimateMs: number;
  /** Every candidate's estimate, in candidate order (symphony and conductor). */
  readonly candidates?: readonly CandidateEstimate[];
}

/**
 * The cost model symphony routing compares nodes with: time a request waits behind each queued
 * request, and per 256-token chunk the time to load it from a local tier, to pull it from a peer,
 * or to recompute it. Defaults: Llama-3.1-8B (fp16, 128 KiB of KV per token, 32 MiB per chunk) on
 * one H100 — see docs/symphony.md for the figures and their sources.
 */
export interface RoutingCosts {
  /** Time one request ahead in a node's queue adds to a new request's first token, ms. */
  readonly queueMsPerRequest: number;
  /** An advisory reservation counts as this fraction of a queued request (it will arrive soon). */
  readonly reservationWeight: number;
  /** Prefill of one chunk on the device, ms. */
  readonly recomputeMsPerChunk: number;
  /**
   * What attention adds to prefilling one chunk per chunk of context before it, ms (absent: 0).
   * A prompt's prefill grows with its square: priced linearly, a 60K-token prefill on an A100 reads
   * as half its length, and the node it blocks looks free while it still runs (prefill.cost.ts).
   */
  readonly attentionMsPerChunkPair?: number;
  /** Loading one chunk from a local tier onto the device, ms. */
  readonly loadMsPerChunk: Readonly<Record<DirectoryTier, number>>;
  /** Pulling one chunk from a peer over the network, on top of the peer's tier read, ms; Infinity = nodes cannot fetch from peers. */
  readonly peerMsPerChunk: number;
  /**
   * A session leaves its live home only when another node's estimate beats the home's by more
   * than this, ms. The estimate's queue term is a snapshot of a load that changes by the time the
   * request runs (an advisory routes seconds ahead), while a move's costs are certain and partly
   * unseen by it (the home's block-granular cache past its last chunk), so a gain inside the
   * snapshot's noise is not taken. 0 = move on any predicted gain.
   */
  readonly moveMarginMs: number;
  /** `conductor`: fetch a peer's prefix when it is more than this many times the node's own (conductor.policy.ts). */
  readonly conductorThreshold?: number;
}

export const DEFAULT_ROUTING_COSTS: RoutingCosts = {
  queueMsPerRequest: 25,
  reservationWeight: 0.5,
  recomputeMsPerChunk: 16,
  loadMsPerChunk: { device: 0, host: 1.4, ssd: 5.5 },
  peerMsPerChunk: 2.7,
  moveMarginMs: 25,
};
