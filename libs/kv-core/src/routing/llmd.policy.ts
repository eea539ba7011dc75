import type { NodePrefix } from '../directory/kv-directory.types.js';
import { kvUsageOf } from './node-load.js';
import { reservedLoad } from './route.load.js';
import type { RouteCandidate, RoutingCosts } from './route.types.js';

/**
 * The weights of llm-d's default scheduling profile (its out-of-the-box endpoint-picker
 * configuration): prefix-cache hits weigh 3, a short waiting queue 2, free KV memory 2. The
 * scorers are described in docs/symphony.md §2 ("llmd").
 */
export const LLMD_DEFAULT_WEIGHTS = { prefixCache: 3, queue: 2, kvUtilization: 2 } as const;

const SCORE_EPSILON = 1e-9;

export type LlmdWeights = { readonly [K in keyof typeof LLMD_DEFAULT_WEIGHTS]: number };

/** One node's three scores, each in [0, 1], and their weighted sum (higher is better). */
export interface LlmdScore {
  readonly nodeId: string;
  readonly prefixCache: number;
  readonly queue: number;
  readonly kvUtilization: number;
  readonly total: number;
}

/**
 * The waiting queue the queue scorer reads, in requests: the node's reported waiting requests
 * plus its prefill backlog in queued-request units — the fresher load signal every policy here
 * gets (heartbeats report the queue once a period; the scheduler knows what it sent since).
 */
export function llmdQueue(n: RouteCandidate, costs: RoutingCosts): number {
  const backlog = costs.queueMsPerRequest > 0 ? (n.backlogMs ?? 0) / costs.queueMsPerRequest : 0;
  return Math.max(0, n.waiting) + backlog;
}

/**
 * llm-d's default scorers over the candidates, in candidate order:
 * - prefix cache: the fraction of the request's whole chunks that lead the node's holdings, in
 *   any tier (a node restores what its host or SSD tier holds rather than recompute it);
 * - queue: min–max normalised over the candidates, 1 for the shortest queue and 0 for the
 *   longest; 1 for all when every queue is equal;
 * - KV utilization: 1 − the fraction of device KV in use.
 * The request's tokens past its last whole chunk have no key and are not scored (as llm-d
 * ignores a partial block).
 */
export function llmdScores(
  nodes: readonly RouteCandidate[],
  chunks: number,
  prefixes: readonly NodePrefix[],
  costs: RoutingCosts,
  weights: LlmdWeights = LLMD_DEFAULT_WEIGHTS,
): LlmdScore[] {
  const depth = new Map(prefixes.map((p) => [p.nodeId, p.prefixChunks]));
  const queues = nodes.map((n) => llmdQueue(n, costs));
  const min = Math.min(...queues);
  const max = Math.max(...queues);
  return nodes.map((n, i) => {
    const prefixCache = chunks > 0 ? Math.min(chunks, depth.get(n.nodeId) ?? 0) / chunks : 0;
    const queue = max === min ? 1 : (max - queues[i]!) / (max - min);
    const kvUtilization = 1 - kvUsageOf(n);
    const total = weights.prefixCache * prefixCache + weights.queue * queue + weights.kvUtilization * kvUtilization;
    return { nodeId: n.nodeId, prefixCache, queue, kvUtilization, total };
  });
}

/**
 * The node with the highest weighted score (llm-d's max-score picker). llm-d breaks ties at
 * random; here they go to the lower load, then the smaller node id, so scheduler replicas agree.
 * Null for no candidates.
 */
export function pickLlmd(
  nodes: readonly RouteCandidate[],
  chunks: number,
  prefixes: readonly NodePrefix[],
  costs: RoutingCosts,
  weights: LlmdWeights = LLMD_DEFAULT_WEIGHTS,
): RouteCandidate | null {
  const scores = llmdScores(nodes, chunks, prefixes, costs, weights);
  let best = -1;
  for (let i = 0; i < nodes.length; i++) {
    if (best < 0) {
      best = i;
      continue;
    }
    const gain = scores[i]!.total - scores[best]!.total;
    const [l, bl] = [reservedLoad(nodes[i]!, costs), reservedLoad(nodes[best]!, costs)];
    // Sums of the same scores in another order can differ in the last bits: that is a tie.
    const tie = Math.abs(gain) <= SCORE_EPSILON;
    if ((!tie && gain > 0) || (tie && (l < bl || (l === bl && nodes[i]!.nodeId < nodes[best]!.nodeId)))) best = i;
  }
  return best < 0 ? null : nodes[best]!;
}
