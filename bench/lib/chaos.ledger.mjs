// The chaos run's targeted faults and their ledger (issue 39): each fault is aimed at KV a later
// request will need, writes an entry (when, what, which detection it expects), and is matched at
// the end against what the nodes counted and what `why` says of the requests that followed.
import { connect } from '@nats-io/transport-node';
import {
  decodeMessage,
  decodeReplyOrError,
  encodeMessage,
  NodeKvRecordSchema,
  NodeWhyRequestSchema,
  nodeWhySubject,
  PrefetchReplySchema,
  PrefetchRequestSchema,
  Subjects,
} from '@mnemo/proto';
import { counter, scrapeMetrics } from '@mnemo/testkit';
import { CHAOS_CLUSTER } from './chaos.cluster.mjs';

/** The gateway's `why` of one request (GET /v1/requests/{id}/kv), or undefined. */
export async function why(base, id) {
  if (!id) return undefined;
  try {
    const res = await fetch(`${base}/v1/requests/${encodeURIComponent(id)}/kv`, { signal: AbortSignal.timeout(10_000) });
    return res.status === 200 ? await res.json() : undefined;
  } catch {
    return undefined;
  }
}

/** Sessions waiting for a later turn, newest first, with the node and chunk keys of their last turn. */
async function heldSessions(base, waiting, max = 12) {
  const out = [];
  for (const rec of [...waiting.values()].reverse().slice(0, max)) {
    const w = await why(base, rec.id);
    if (w?.node_id) out.push({ rec, node: w.node_id, keys: [...new Set(w.chunks.map((c) => c.key).filter(Boolean))] });
  }
  return out;
}

/**
 * Corrupts, on the node that served it, every SSD extent the node's journal names for a chunk of
 * the last turn of up to `sessions` sessions that have a later turn scheduled. One ledger entry per session.
 */
export async function corruptScheduled(cluster, base, waiting, atS, sessions = 2) {
  const entries = [];
  for (const h of await heldSessions(base, waiting)) {
    if (entries.length >= sessions) break;
    const node = cluster.nodes.find((n) => n.id === h.node);
    if (!node) continue;
    const replicas = cluster.journalReplicas(node);
    const held = h.keys.filter((k) => replicas.has(k));
    if (held.length === 0) continue;
    const puts = held.flatMap((k) => replicas.get(k));
    cluster.corruptExtents(node, puts);
    entries.push({
      fault: 'corrupt',
      injected_at_s: atS,
      target: {
        node: node.id,
        session: h.rec.session,
        after_request: h.rec.id,
        chunks: held.map((k) => ({ key: k, layers: replicas.get(k).length, offsets: replicas.get(k).map((p) => p.offset) })),
      },
      expected_detection:
        "a CRC32C failure on the node (mnemo_kv_crc_failures_total) when a later request restores or a peer pulls one of these chunks, the chunk then 'corrupt' in that request's why, and its answer equal to the clean run's",
    });
  }
  return entries;
}

const deadlinesOf = async (node) => {
  try {
    return counter(await scrapeMetrics(node.port, 3000), 'mnemo_kv_peer_fetch_deadlines_total');
  } catch {
    return undefined;
  }
};

/**
 * Pauses the node holding the newest waiting sessions' KV for `ms` and, while it hangs, tells
 * another node (over NATS, as the scheduler does for an advisory) to prefetch those sessions'
 * chunks from it: that node's real peer client pulls from the paused one, a pull in flight for
 * the whole pause, far past its deadline. The scheduler alone cannot be made to start a pull at a
 * chosen moment; the pull itself, its deadline and its counters are the node's own.
 */
export async function pauseHolder(cluster, base, waiting, atS, ms, deadlineMs) {
  let held = [];
  for (const until = Date.now() + 20_000; held.length === 0 && Date.now() < until;) {
    held = await heldSessions(base, waiting);
    if (held.length === 0) await new Promise((r) => setTimeout(r, 500));
  }
  const counts = new Map();
  for (const h of held) counts.set(h.node, (counts.get(h.node) ?? 0) + 1);
  const target = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const node = cluster.nodes.find((n) => n.id === target) ?? cluster.nodes[0];
  const puller = cluster.nodes.find((n) => n !== node);
  const others = cluster.nodes.filter((n) => n !== node);
  const before = await Promise.all(others.map(deadlinesOf));
  const nc = await connect({ servers: cluster.nats.url, user: cluster.common.NATS_USER, pass: cluster.common.NATS_PASSWORD });
  const stoppedMs = Date.now();
  node.child.kill('SIGSTOP');
  const pulls = [];
  try {
    for (const h of held.filter((x) => x.node === node.id).slice(0, 3)) {
      const req = encodeMessage(PrefetchRequestSchema, {
        advisoryId: `chaos-pause-${h.rec.session}`,
        sessionId: h.rec.session,
        model: CHAOS_CLUSTER.model,
        chunkKeys: h.keys,
        sources: [{ nodeId: node.id, grpcAddress: `127.0.0.1:${node.grpcPort}`, chunkKeys: h.keys }],
        expiresAtMs: BigInt(Date.now() + 60_000),
      });
      const reply = await nc.request(Subjects.nodePrefetch(puller.id), req, { timeout: 2000 }).catch((e) => e);
      const r = reply instanceof Error ? { error: { message: reply.message } } : decodeReplyOrError(PrefetchReplySchema, reply.data);
      pulls.push({
        session: h.rec.session,
        puller: puller.id,
        chunks_queued: r.ok?.chunksQueued ?? 0,
        ...(r.error ? { error: r.error.message } : {}),
        after_ms: Date.now() - stoppedMs,
      });
    }
  } finally {
    await nc.close();
  }
  await new Promise((r) => setTimeout(r, Math.max(0, stoppedMs + ms - Date.now())));
  node.child.kill('SIGCONT');
  await new Promise((r) => setTimeout(r, 1500));
  const after = await Promise.all(others.map(deadlinesOf));
  const inFlight = pulls.filter((p) => p.chunks_queued > 0 && p.after_ms + deadlineMs < ms);
  return {
    fault: 'pause',
    injected_at_s: atS,
    target: { node: node.id, pause_ms: ms, peer_deadline_base_ms: deadlineMs, pulls },
    expected_detection:
      "a peer deadline (mnemo_kv_peer_fetch_deadlines_total) on the node pulling from the paused one; the session's next turn recomputed or restored, its answer equal to the clean run's",
    pulls_in_flight_past_deadline: inFlight.length,
    peer_deadlines_during_pause: others.reduce((s, n, i) => s + Math.max(0, (after[i] ?? 0) - (before[i] ?? 0)), 0),
    node: node.id,
  };
}

/**
 * The targeted nodes' drop logs (the node's `why` subject, asked for the targeted keys): a
 * targeted chunk dropped as `corrupt` was read and failed its CRC32C. Polled with every sample and
 * before each kill, since a node's drop log lives as long as its process.
 */
export class CorruptWatch {
  /** `node/key` → { node, key, tier, atUnixMs } of the first corrupt drop seen. */
  found = new Map();

  static async open(cluster) {
    const w = new CorruptWatch();
    w.cluster = cluster;
    w.nc = await connect({
      servers: cluster.nats.url,
      user: cluster.common.NATS_USER,
      pass: cluster.common.NATS_PASSWORD,
      maxReconnectAttempts: -1,
    });
    return w;
  }

  async poll(ledger) {
    const byNode = new Map();
    for (const e of ledger.filter((x) => x.fault === 'corrupt'))
      byNode.set(e.target.node, [...(byNode.get(e.target.node) ?? []), ...e.target.chunks.map((c) => c.key)]);
    await Promise.all(
      [...byNode].map(async ([node, keys]) => {
        try {
          const m = await this.nc.request(
            nodeWhySubject(node),
            encodeMessage(NodeWhyRequestSchema, { requestId: 'chaos-ledger', chunkKeys: keys }),
            {
              timeout: 2000,
            },
          );
          for (const d of decodeMessage(NodeKvRecordSchema, m.data).drops) {
            if (d.reason !== 'corrupt' || this.found.has(`${node}/${d.key}`)) continue;
            this.found.set(`${node}/${d.key}`, { node, key: d.key, tier: d.tier, atUnixMs: Number(d.atUnixMs) });
          }
        } catch {
          // paused, restarting or NATS down: the next poll asks again
        }
      }),
    );
  }

  async close() {
    await this.nc.close();
  }
}

/**
 * For each corrupt drop the watch saw, the requests on that node in flight at that moment whose
 * prompt holds the chunk (`why`): the request that read it (each must answer as the clean run did).
 */
export async function corruptDetections(base, records, watch) {
  const out = [];
  for (const d of watch.found.values()) {
    const around = records.filter((r) => r.id && r.startedMs <= d.atUnixMs + 1000 && (r.endedMs ?? Infinity) >= d.atUnixMs - 1000);
    const readers = [];
    for (const r of around) {
      const w = await why(base, r.id);
      if (w?.node_id === d.node && w.chunks.some((c) => c.key === d.key)) readers.push(r);
    }
    out.push({ ...d, readers });
  }
  return out;
}
