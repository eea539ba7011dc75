// The longest context a node completes for one model, measured through the serving path: a
// scheduler and a node-manager as child processes, requests sent to the scheduler over NATS
// (SCHEDULE) like the gateway sends them. Each limit is run: it completes, one block more is
// refused at admission (or, had admission taken it, would not complete before its deadline).
import { chunkKeys } from '@mnemo/kv-core';
import { decodeMessage, encodeMessage, InferenceRequestSchema, ScheduleReplySchema, Subjects } from '@mnemo/proto';
import { counter, scrapeMetrics } from '@mnemo/testkit';
import { withSchedulerAndNode } from './services.mjs';
import { tokenStream } from './token-stream.mjs';

/** One request of `blocks` context blocks (prompt blocks·16 − decode, then `decode` tokens). */
async function attempt(nc, model, blocks, decode, deadlineMs) {
  const n = blocks * 16 - decode;
  const tokens = Array.from({ length: n }, (_, i) => (i * 37 + 16) % 256);
  const stream = tokenStream(nc);
  const request = {
    requestId: `mc-${blocks}-${Math.random().toString(36).slice(2, 8)}`,
    model,
    tokens,
    chunkKeys: chunkKeys(model, '', tokens),
    sampling: { temperature: 0, topP: 1, maxTokens: decode, seed: 1n },
    replySubject: stream.inbox,
    deadlineUnixMs: Date.now() + deadlineMs,
  };
  const t0 = performance.now();
  const reply = decodeMessage(
    ScheduleReplySchema,
    (await nc.request(Subjects.SCHEDULE, encodeMessage(InferenceRequestSchema, request), { timeout: 60_000 })).data,
  );
  if (reply.result.case !== 'nodeId') {
    // Nothing will arrive on the inbox; its subscription ends with the connection.
    void stream.finish().catch(() => undefined);
    return { ok: false, refused: true, why: reply.result.value?.message ?? String(reply.result.case) };
  }
  try {
    const r = await stream.finish();
    return { ok: true, ms: Math.round(performance.now() - t0), generated: r.tokens.length };
  } catch (e) {
    return { ok: false, refused: false, why: e.message };
  }
}

/**
 * Starts a scheduler and one node with `nodeEnv`, then finds the largest whole-block context of
 * `model` that completes: from `guess` down until one completes, then up while the next does.
 */
export async function servingMaxContext({ natsUrl, name, model, nodeEnv, guess, decode = 8, deadlineMs = 120_000, metrics = [] }) {
  const nodeEnvOf = () => ({
    NODE_ID: `swift-${name}`,
    NODE_ENGINE: 'reference',
    NODE_KV_STORE: 'off',
    NODE_HEARTBEAT_MS: '200',
    ...nodeEnv,
  });
  return withSchedulerAndNode({ natsUrl, dataPrefix: `mnemo-swiftcache-${name}-`, nodeEnv: nodeEnvOf }, async ({ nc, nodePort }) => {
    const tries = [];
    // The scheduler routes only to nodes it has heard from.
    await new Promise((r) => setTimeout(r, 1000));
    const run = async (b) => {
      const r = await attempt(nc, model, b, decode, deadlineMs);
      tries.push({ blocks: b, ...r });
      console.log(
        `  ${name}: ${b} blocks (${b * 16} tokens) →`,
        r.ok ? `completed in ${r.ms} ms` : `${r.refused ? 'refused' : 'failed'}: ${r.why}`,
      );
      return r.ok;
    };
    let b = guess;
    while (b > 1 && !(await run(b))) b--;
    while (await run(b + 1)) b++;
    const text = await scrapeMetrics(nodePort);
    const picked = Object.fromEntries(metrics.map((m) => [m, counter(text, m)]));
    return {
      tokens: b * 16,
      blocks: b,
      refused_at_blocks: b + 1,
      completed_ms: tries.find((t) => t.blocks === b && t.ok)?.ms,
      refusal: tries.find((t) => t.blocks === b + 1)?.why,
      metrics: picked,
    };
  });
}
