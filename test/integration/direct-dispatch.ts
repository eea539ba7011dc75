// Sends an InferenceRequest straight to one node, as the scheduler would (kv_sources included).
import { createInbox } from '@nats-io/transport-node';
import { chunkKeys } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, InferenceRequestSchema, nodeInferSubject, ScheduleReplySchema, type TokenEvent } from '@mnemo/proto';
import { InferenceRun, type Cluster } from './cluster.js';

export interface DirectResult {
  readonly tokens: number[];
  readonly done?: TokenEvent;
  /** Admission refused: the ErrorReply code. */
  readonly error?: string;
}

export type KvSourceInit = { nodeId: string; grpcAddress: string; chunkKeys: string[] };

/** Greedy, 8 tokens, tenant `itest`; waits for the last event. */
export async function dispatch(cluster: Cluster, nodeId: string, tokens: number[], kvSources: KvSourceInit[] = [], model = 'mnemo-tiny'): Promise<DirectResult> {
  const replySubject = createInbox();
  const r = new InferenceRun(cluster.nc, replySubject, 30_000);
  await cluster.nc.flush();
  const requestId = `direct-${Math.random().toString(36).slice(2)}`;
  const req = encodeMessage(InferenceRequestSchema, {
    requestId,
    tenant: 'itest',
    model,
    tokens,
    chunkKeys: chunkKeys(model, 'itest', tokens),
    sampling: { temperature: 0, topP: 1, maxTokens: 8, seed: 1n },
    replySubject,
    attempt: 1,
    kvSources,
  });
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
