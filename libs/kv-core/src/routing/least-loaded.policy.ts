import { kvUsageOf, type NodeLoad } from './node-load.js';

/**
 * Weight of a full KV cache, in "requests". A node near full KV must preempt or swap to admit
 * more, which costs about as much as a few queued requests, so kvUsage = 1 counts as 4.
 */
export const KV_USAGE_WEIGHT = 4;

/**
 * Load score: `running + waiting + KV_USAGE_WEIGHT · clamp(kvUsage, 0, 1)`. Lower is better.
 * Queued work dominates; KV pressure breaks near-ties toward nodes with cache room.
 */
export function loadScore(node: NodeLoad, kvWeight: number = KV_USAGE_WEIGHT): number {
  return node.running + node.waiting + kvWeight * kvUsageOf(node);
}

/**
 * The node serving `model` with the lowest {@link loadScore}; ties go to the smallest nodeId
 * (code-unit order, not locale order) so every scheduler replica picks the same node.
 * Returns null when no node serves the model.
 */
export function pickLeastLoaded(nodes: readonly NodeLoad[], model: string, kvWeight: number = KV_USAGE_WEIGHT): NodeLoad | null {
  let best: NodeLoad | null = null;
  let bestScore = Infinity;
  for (const node of nodes) {
    if (!node.models.includes(model)) continue;
    const score = loadScore(node, kvWeight);
    if (best === null || score < bestScore || (score === bestScore && node.nodeId < best.nodeId)) {
      best = node;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Ids of nodes whose last heartbeat is more than `timeoutMs` old at `nowMs` (exactly
 * `timeoutMs` old is still alive), in input order.
 */
export function expiredNodes(nodes: readonly NodeLoad[], nowMs: number, timeoutMs: number): string[] {
  return nodes.filter((n) => nowMs - n.lastSeenMs > timeoutMs).map((n) => n.nodeId);
}
