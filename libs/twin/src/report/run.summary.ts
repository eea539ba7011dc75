import { percentile } from '@mnemo/kv-core';
import type { TwinCluster } from '../scenario/twin.cluster.js';

const round = (x: number | null, d = 2): number | null => (x === null || !Number.isFinite(x) ? null : Math.round(x * 10 ** d) / 10 ** d);

/** One twin run's figures, named as the benchmark names its per-pass figures. */
export interface RunSummary {
  readonly requests: number;
  readonly failed: number;
  readonly virtual_s: number;
  readonly ttft_p50_ms: number | null;
  readonly ttft_p99_ms: number | null;
  readonly ttft_mean_ms: number | null;
  readonly tpot_p50_ms: number | null;
  readonly tpot_p99_ms: number | null;
  readonly prefix_hit_rate: number | null;
  readonly restored_tokens: { readonly from_peers: number; readonly from_local_tiers: number };
  readonly prefetched_chunks: number;
  readonly routing: Readonly<Record<string, number>>;
  readonly reservations: { readonly advisories: number; readonly hit: number; readonly moved: number };
  readonly node_busy_share: readonly (number | null)[];
  readonly preemptions: number;
  readonly blocked_ms: number;
  readonly events: number;
  /**
   * Means over every node, ms: queued on the node, arrival there to the first token, and what the client's TTFT adds (the path outside the
   * nodes).
   */
  readonly time_on_node: {
    readonly queue_mean_ms: number | null;
    readonly ttft_mean_ms: number | null;
    readonly outside_nodes_mean_ms: number | null;
  };
  /**
   * TTFT by where a turn ran against its session's previous turn, as the live benchmark splits it (bench/multiround/summary.mjs byMove).
   */
  readonly by_move: Readonly<Record<MoveKind, { readonly requests: number; readonly ttft_p50_ms: number | null }>>;
}

type MoveKind = 'first' | 'stayed' | 'moved';

export function summarizeRun(c: TwinCluster): RunSummary {
  const rs = c.users.results;
  const ttft = rs.map((r) => r.ttftMs);
  const tpot = rs.flatMap((r) => (r.tpotMs === null ? [] : [r.tpotMs]));
  const prompt = rs.reduce((s, r) => s + r.promptTokens, 0);
  const cached = rs.reduce((s, r) => s + r.cachedTokens, 0);
  const sum = (f: (n: (typeof c.nodes)[number]) => number) => c.nodes.reduce((s, n) => s + f(n), 0);
  const t = c.events.now;
  return {
    requests: rs.length,
    failed: c.failed,
    virtual_s: round(t / 1000, 1)!,
    ttft_p50_ms: round(percentile(ttft, 50)),
    ttft_p99_ms: round(percentile(ttft, 99)),
    ttft_mean_ms: round(ttft.length ? ttft.reduce((a, b) => a + b, 0) / ttft.length : null),
    tpot_p50_ms: round(percentile(tpot, 50)),
    tpot_p99_ms: round(percentile(tpot, 99)),
    prefix_hit_rate: round(prompt ? cached / prompt : null, 3),
    restored_tokens: {
      from_peers: sum((n) => n.kv.counters.peerRestoredTokens),
      from_local_tiers: sum((n) => n.kv.counters.restoredTokens),
    },
    prefetched_chunks: sum((n) => n.kv.counters.prefetchedChunks),
    routing: { ...c.scheduler.counters.reasons },
    reservations: {
      advisories: c.scheduler.counters.advisories,
      hit: c.scheduler.counters.reservationsHit,
      moved: c.scheduler.counters.reservationsMoved,
    },
    node_busy_share: c.nodes.map((n) => round(t > 0 ? n.counters.busyMs / t : null, 3)),
    preemptions: sum((n) => n.counters.preemptions),
    blocked_ms: round(
      sum((n) => n.counters.blockedMs),
      1,
    )!,
    events: c.events.fired,
    time_on_node: timeOnNode(c, ttft),
    by_move: byMove(rs),
  };
}

/** A session's first turn, a turn served where its previous one was, or one moved to another node. */
function byMove(rs: TwinCluster['users']['results']): RunSummary['by_move'] {
  const last = new Map<string, string>();
  const ttft: Record<MoveKind, number[]> = { first: [], stayed: [], moved: [] };
  for (const r of rs) {
    const previous = last.get(r.session);
    ttft[r.turn === 0 || previous === undefined ? 'first' : previous === r.node ? 'stayed' : 'moved'].push(r.ttftMs);
    last.set(r.session, r.node);
  }
  const group = (k: MoveKind) => ({ requests: ttft[k].length, ttft_p50_ms: round(percentile(ttft[k], 50)) });
  return { first: group('first'), stayed: group('stayed'), moved: group('moved') };
}

/** The live benchmark's split of TTFT (bench/multiround/summary.mjs onNodeFigures), from the nodes' counters. */
function timeOnNode(c: TwinCluster, ttft: readonly number[]): RunSummary['time_on_node'] {
  let queued = 0;
  let queuedMs = 0;
  let firsts = 0;
  let firstMs = 0;
  for (const n of c.nodes) {
    queued += n.counters.queued;
    queuedMs += n.counters.queuedMs;
    firsts += n.counters.firstTokens;
    firstMs += n.counters.firstTokenMs;
  }
  const onNode = firsts > 0 ? firstMs / firsts : null;
  const client = ttft.length ? ttft.reduce((a, b) => a + b, 0) / ttft.length : null;
  return {
    queue_mean_ms: round(queued > 0 ? queuedMs / queued : null, 2),
    ttft_mean_ms: round(onNode, 2),
    outside_nodes_mean_ms: round(onNode !== null && client !== null ? client - onNode : null, 2),
  };
}
