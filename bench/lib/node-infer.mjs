// One greedy request sent straight to a node (NATS nodeInfer, no scheduler), as the cluster
// benchmarks time a node's own path: admitted or an error, then time to first token at the client.
import { chunkKeys } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, InferenceRequestSchema, nodeInferSubject, ScheduleReplySchema } from '@mnemo/proto';
import { tokenStream } from './token-stream.mjs';

export async function inferOnNode(nc, nodeId, { model, tenant, tokens, maxTokens, kvSources = [], idPrefix = 'bench' }) {
  const stream = tokenStream(nc);
  const request = {
    requestId: `${idPrefix}-${Math.random().toString(36).slice(2, 10)}`,
    tenant,
    model,
    tokens,
    chunkKeys: chunkKeys(model, tenant, tokens),
    sampling: { temperature: 0, topP: 1, maxTokens, seed: 1n },
    replySubject: stream.inbox,
    attempt: 1,
    kvSources,
  };
  const reply = decodeMessage(
    ScheduleReplySchema,
    (await nc.request(nodeInferSubject(nodeId), encodeMessage(InferenceRequestSchema, request), { timeout: 60_000 })).data,
  );
  if (reply.result.case !== 'nodeId') throw new Error(`${idPrefix} request not admitted: ${JSON.stringify(reply.result.value)}`);
  return stream.finish();
}
