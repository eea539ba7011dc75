// One greedy request sent to the scheduler (NATS schedule), its tokens streamed back to an inbox:
// what the cluster benchmarks' users send. A request the scheduler does not place throws.
// `ignoreEos`: a trained model's EOS does not end the reply, which then has the length the workload drew.
import { chunkKeys } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, InferenceRequestSchema, ScheduleReplySchema, Subjects } from '@mnemo/proto';
import { tokenStream } from './token-stream.mjs';

/** `requestId` gets a random suffix (a rerun never collides); `t0` is when the stream started listening. */
export async function inferViaScheduler(nc, { requestId, tenant, sessionId, model, tokens, maxTokens, deadlineMs, ignoreEos = false }) {
  const stream = tokenStream(nc);
  const request = {
    requestId: `${requestId}-${Math.random().toString(36).slice(2, 8)}`,
    tenant,
    ...(sessionId === undefined ? {} : { sessionId }),
    model,
    tokens,
    chunkKeys: chunkKeys(model, tenant, tokens),
    sampling: { temperature: 0, topP: 1, maxTokens, seed: 1n, ignoreEos },
    replySubject: stream.inbox,
    deadlineUnixMs: Date.now() + deadlineMs,
  };
  const reply = decodeMessage(
    ScheduleReplySchema,
    (await nc.request(Subjects.SCHEDULE, encodeMessage(InferenceRequestSchema, request), { timeout: 60_000 })).data,
  );
  if (reply.result.case !== 'nodeId') throw new Error(`not scheduled: ${JSON.stringify(reply.result.value)}`);
  const { ttftMs, cachedTokens, tokens: generated } = await stream.finish();
  return { requestId: request.requestId, node: reply.result.value, t0: stream.t0, ttftMs, cachedTokens, tokens: generated };
}
