// The CPU a live node-manager's batch loop spends per iteration, outside the modelled engine
// time: planning (kv-core), the block ledger and its key hashing, sampling, and encoding each
// token event. Measured on the node's own code (BatchScheduler over a sim engine that costs
// nothing) with a sink that encodes every TokenEvent as the NATS sink does.
import 'reflect-metadata';
import { create } from '@bufbuild/protobuf';
import { chunkKeys } from '@mnemo/kv-core';
import { SimEngine } from '@mnemo/engine';
import { encodeMessage, InferenceRequestSchema, TokenEventSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics } from '@mnemo/service-kit';
import { BatchScheduler } from '../../apps/node-manager/dist/batching/batch.scheduler.js';
import { Sequence } from '../../apps/node-manager/dist/shared/sequence.js';
import { SequenceStore } from '../../apps/node-manager/dist/batching/sequence.store.js';
import { NodeMetrics } from '../../apps/node-manager/dist/shared/node.metrics.js';

const MODEL = 'mnemo-medium';
const zero = { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0, restorePerChunkMs: 0 };
const low = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(0.1 * (xs.length - 1))];
let salt = 0;
const text = (n) => {
  const s = ++salt;
  return Array.from({ length: n }, (_, i) => (i * 37 + s * 101 + 7) % 250);
};

function node() {
  const engine = new SimEngine({ models: [MODEL], cost: zero, kvBlocks: 4096, maxContext: 16384 });
  const store = new SequenceStore();
  const clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };
  const metrics = new ServiceMetrics('twin-calibrate');
  const sink = { emit: (_seq, event) => void encodeMessage(TokenEventSchema, create(TokenEventSchema, event)) };
  const config = { NODE_ID: 'n', NODE_MAX_BATCH: 64, NODE_MAX_PREFILL_TOKENS: 1 << 20, NODE_PREFIX_CACHE: 'on', NODE_KV_WARM: 'off' };
  const sut = new BatchScheduler(
    store,
    engine,
    sink,
    config,
    clock,
    new NodeMetrics(metrics),
    metrics,
    new JsonLogger('twin-calibrate', 'error', () => undefined),
  );
  const add = (tokens, maxTokens) => {
    const request = create(InferenceRequestSchema, {
      requestId: `r${++salt}`,
      tenant: 't',
      model: MODEL,
      tokens,
      chunkKeys: chunkKeys(MODEL, 't', tokens),
      replySubject: '_INBOX.x',
      sampling: { temperature: 0, topP: 1, maxTokens, seed: 1n },
    });
    store.add(new Sequence(request, engine.models()[0], store.arrivalSeq(), 0));
  };
  return { sut, add, engine };
}

/** Low-quantile ms of one prefill iteration of a fresh prompt of `tokens` tokens. */
async function prefillIteration(tokens, reps = 120) {
  const { sut, add } = node();
  const xs = [];
  for (let r = 0; r < reps + 2; r++) {
    add(text(tokens), 1);
    const t0 = performance.now();
    await sut.runIteration();
    if (r >= 2) xs.push(performance.now() - t0);
  }
  return low(xs);
}

/** Low-quantile ms of one decode iteration of `seqs` sequences. */
async function decodeIteration(seqs, iterations = 150) {
  const { sut, add } = node();
  for (let i = 0; i < seqs; i++) add(text(300), iterations + 20);
  await sut.runIteration();
  const xs = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await sut.runIteration();
    xs.push(performance.now() - t0);
  }
  return low(xs);
}

export async function measureNodeCpu() {
  const p1 = await prefillIteration(1024);
  const p4 = await prefillIteration(4096);
  const d1 = await decodeIteration(1);
  const d16 = await decodeIteration(16);
  const perKToken = Math.max(0, (p4 - p1) / 3);
  const perSeq = Math.max(0, (d16 - d1) / 15);
  return {
    prefill_ms_per_ktoken: perKToken,
    prefill_base_ms: Math.max(0, p1 - perKToken),
    decode_base_ms: Math.max(0, d1 - perSeq),
    decode_ms_per_seq: perSeq,
    points: { prefill_1k_ms: p1, prefill_4k_ms: p4, decode_1_ms: d1, decode_16_ms: d16 },
  };
}
