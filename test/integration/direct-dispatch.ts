// Sends an InferenceRequest straight to one node, as the scheduler would (kv_sources included).
import { createInbox } from '@nats-io/transport-node';
import { chunkKeys } from '@mnemo/kv-core';
import {
  decodeMessage,
  encodeMessage,
  HeartbeatSchema,
  InferenceRequestSchema,
  nodeInferSubject,
  ScheduleReplySchema,
  Subjects,
  type TokenEvent,
} from '@mnemo/proto';
import { InferenceRun, type Cluster } from './cluster.js';

export interface DirectResult {
  readonly tokens: number[];
  readonly done?: TokenEvent;
  /** Admission refused: the ErrorReply code. */
  readonly error?: string;
}

export type KvSourceInit = { nodeId: string; grpcAddress: string; chunkKeys: string[] };

/** A greedy request of tenant `itest`, encoded for a node's inbox. */
function greedyRequest(r: {
  requestId: string;
  model: string;
  tokens: number[];
  maxTokens: number;
  replySubject: string;
  kvSources?: KvSourceInit[];
}): Uint8Array {
  return encodeMessage(InferenceRequestSchema, {
    requestId: r.requestId,
    tenant: 'itest',
    model: r.model,
    tokens: r.tokens,
    chunkKeys: chunkKeys(r.model, 'itest', r.tokens),
    sampling: { temperature: 0, topP: 1, maxTokens: r.maxTokens, seed: 1n },
    replySubject: r.replySubject,
    attempt: 1,
    kvSources: r.kvSources ?? [],
  });
}

/** Greedy, 8 tokens, tenant `itest`; waits for the last event. */
export async function dispatch(
  cluster: Cluster,
  nodeId: string,
  tokens: number[],
  kvSources: KvSourceInit[] = [],
  model = 'mnemo-tiny',
): Promise<DirectResult> {
  const replySubject = createInbox();
  const r = new InferenceRun(cluster.nc, replySubject, 30_000);
  await cluster.nc.flush();
  const requestId = `direct-${Math.random().toString(36).slice(2)}`;
  const req = greedyRequest({ requestId, model, tokens, maxTokens: 8, replySubject, kvSources });
  const reply = decodeMessage(ScheduleReplySchema, (await cluster.nc.request(nodeInferSubject(nodeId), req, { timeout: 10_000 })).data);
  if (reply.result.case !== 'nodeId') {
    r.close();
    return { tokens: [], error: reply.result.case === 'error' ? reply.result.value.code : 'empty' };
  }
  r.requestId = requestId;
  const events = await r.done();
  r.close();
  return { tokens: r.tokens(), done: events.find((e) => e.done) };
}

const BUSY_SEEN_MS = 30_000;

/** A node kept busy by {@link keepBusy}; `stop` cancels what is in flight and sends no more. */
export interface BusyNode {
  stop(): void;
}

/**
 * Makes `nodeId` busy with `n` long requests sent straight to it (routing cannot spread them),
 * and resolves once two heartbeats from it report at least `n` running: the scheduler, which
 * hears every heartbeat too, has then seen the load. A busy request that ends early (its greedy
 * continuation reached EOS, which any kernel change can move) is replaced by a fresh one, so the
 * load holds until `stop`.
 */
export async function keepBusy(cluster: Cluster, nodeId: string, n: number, model = 'mnemo-tiny', maxTokens = 1500): Promise<BusyNode> {
  const seen = cluster.nc.subscribe(Subjects.HEARTBEAT);
  const live = new Set<InferenceRun>();
  let stopped = false;
  let sent = 0;
  let replaced = 0;
  const stop = (): void => {
    stopped = true;
    for (const r of live) {
      cluster.cancel(nodeId, r.requestId);
      r.close();
    }
    live.clear();
  };
  const send = async (): Promise<void> => {
    const i = sent++;
    const replySubject = createInbox();
    const r = new InferenceRun(cluster.nc, replySubject, 120_000);
    await cluster.nc.flush();
    const requestId = `busy-${i}-${Math.random().toString(36).slice(2)}`;
    const tokens = [5 + (i % 200), 6 + Math.floor(i / 200), 7];
    const req = greedyRequest({ requestId, model, tokens, maxTokens, replySubject });
    const reply = decodeMessage(ScheduleReplySchema, (await cluster.nc.request(nodeInferSubject(nodeId), req, { timeout: 10_000 })).data);
    if (reply.result.case !== 'nodeId') {
      r.close();
      throw new Error(`busy request refused: ${reply.result.case === 'error' ? reply.result.value.message : reply.result.case}`);
    }
    r.requestId = requestId;
    r.nodeId = nodeId;
    live.add(r);
    void r
      .until((events) => events.some((e) => e.done), 'its end')
      .catch(() => undefined)
      .then(() => {
        if (!live.delete(r)) return; // cancelled by stop
        r.close();
        replaced++;
        if (!stopped) void send().catch(() => undefined); // the heartbeat wait below reports a node that stopped taking them
      });
  };
  try {
    for (let i = 0; i < n; i++) await send();
    // Bounded: a node that stopped reporting (or taking requests) must fail the spec with what
    // was seen, not hang it until jest's timeout says nothing.
    let loaded = 0;
    const reported: number[] = [];
    const giveUp = setTimeout(() => seen.unsubscribe(), BUSY_SEEN_MS);
    try {
      for await (const m of seen) {
        const hb = decodeMessage(HeartbeatSchema, m.data);
        if (hb.nodeId !== nodeId) continue;
        reported.push(hb.running + hb.waiting);
        // Running or queued behind a full batch: routing prices only what is queued, so specs that need a busy node cap its batch.
        if (hb.running + hb.waiting >= n && ++loaded === 2) return { stop };
      }
    } finally {
      clearTimeout(giveUp);
    }
    throw new Error(
      `${nodeId} never reported ${n} running or waiting twice in ${BUSY_SEEN_MS} ms ` +
        `(running + waiting per heartbeat: ${reported.slice(-20).join(',') || 'none'}; ` +
        `${sent} busy requests sent, ${replaced} ended early and were replaced, ${live.size} in flight)`,
    );
  } catch (e) {
    stop();
    throw e;
  } finally {
    seen.unsubscribe();
  }
}
