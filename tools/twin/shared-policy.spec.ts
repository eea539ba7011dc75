import { create } from '@bufbuild/protobuf';
import { chunkKeys } from '@mnemo/kv-core';
import { SimEngine, type SimStep } from '@mnemo/engine';
import { InferenceRequestSchema } from '@mnemo/proto';
import { JsonLogger, ServiceMetrics, type Clock } from '@mnemo/service-kit';
import { Distribution, EventQueue, NO_OVERHEADS, SeededRng, simCostCompute, TwinNode, type TwinNodeConfig } from '@mnemo/twin';
import { BatchScheduler } from '../../apps/node-manager/src/batching/batch.scheduler.js';
import { Sequence } from '../../apps/node-manager/src/shared/sequence.js';
import { SequenceStore } from '../../apps/node-manager/src/batching/sequence.store.js';
import type { NodeManagerConfig } from '../../apps/node-manager/src/config/node-manager.config.js';
import { NodeMetrics } from '../../apps/node-manager/src/shared/node.metrics.js';

// The twin composes the node's own policy code (kv-core nodeIterationInput / planIteration and
// the block ledger): change one policy parameter — here the prefill token budget of
// planIteration (NODE_MAX_PREFILL_TOKENS) — and a live node's batch loop and a twin node make
// the same new decisions, engine call by engine call.
const MODEL = 'mnemo-medium';
const zero = { prefillBaseMs: 0, prefillPerTokenMs: 0, decodeBaseMs: 0, decodePerSeqMs: 0, decodePerKContextMs: 0, restorePerChunkMs: 0 };
const prompts = [120, 90, 200, 60].map((n, i) => Array.from({ length: n }, (_, j) => (j * 7 + i * 31) % 250));

type Step = [kind: string, ids: string[]];

async function liveNode(maxPrefillTokens: number): Promise<Step[]> {
  const steps: Step[] = [];
  const engine = new SimEngine({
    models: [MODEL],
    cost: zero,
    kvBlocks: 256,
    onStep: (s: SimStep) => void steps.push([s.kind, [...s.seqIds]]),
  });
  const store = new SequenceStore();
  const clock: Clock = { monotonicMs: () => 0, unixMs: () => 1_700_000_000_000 };
  const metrics = new ServiceMetrics('shared-policy');
  const config = {
    NODE_ID: 'n',
    NODE_MAX_BATCH: 8,
    NODE_MAX_PREFILL_TOKENS: maxPrefillTokens,
    NODE_PREFIX_CACHE: 'on',
  } as NodeManagerConfig;
  const sut = new BatchScheduler(
    store,
    engine,
    { emit: () => undefined },
    config,
    clock,
    new NodeMetrics(metrics),
    metrics,
    new JsonLogger('test', 'error', () => undefined),
  );
  prompts.forEach((tokens, i) => {
    const request = create(InferenceRequestSchema, {
      requestId: `r${i}`,
      tenant: 't',
      model: MODEL,
      tokens,
      chunkKeys: chunkKeys(MODEL, 't', tokens),
      replySubject: `_INBOX.r${i}`,
      sampling: { temperature: 0, topP: 1, maxTokens: 4, seed: 1n },
    });
    store.add(new Sequence(request, engine.models()[0]!, store.arrivalSeq(), 0));
  });
  for (let i = 0; i < 1000 && (await sut.runIteration()); i++);
  return steps;
}

function twinNode(maxPrefillTokens: number): Step[] {
  const steps: Step[] = [];
  const events = new EventQueue();
  const config: TwinNodeConfig = {
    id: 'n',
    model: MODEL,
    eosTokenId: 0,
    maxContext: 4096,
    kvBlocks: 256,
    maxBatch: 8,
    maxPrefillTokens,
    maxWaiting: 256,
    prefixCache: true,
    prefixCacheBlocks: Infinity,
    heartbeatMs: 1000,
    finishBeatMs: 0,
    kvEventsMs: 100,
    layers: 8,
    kvBytesPerToken: 256,
    host: [],
    ssd: [],
    ssdTtlMs: 1e9,
    promote: false,
    prefetchTtlMs: 60_000,
    maxAdvisories: 8,
    warm: false,
  };
  const free = { dispatchMs: 0, bytesPerMs: Infinity };
  const node = new TwinNode(
    config,
    {
      compute: simCostCompute({ ...zero }),
      links: { hostLoad: free, peer: free, ssdRead: free, hostWrite: free, ssdWrite: free },
      overheads: { ...NO_OVERHEADS, timerLagMs: Distribution.constant(0) },
    },
    {
      events,
      rng: new SeededRng(1),
      peerTiers: () => undefined,
      firstToken: () => undefined,
      finished: () => undefined,
      publishKv: () => undefined,
      heartbeat: () => undefined,
      onStep: (_n, kind, ids) => void steps.push([kind === 'resume' ? 'prefill' : kind, [...ids]]),
    },
  );
  prompts.forEach((tokens, i) =>
    node.admit(
      {
        id: `r${i}`,
        tenant: 't',
        sessionId: '',
        model: MODEL,
        tokens,
        chunkKeys: chunkKeys(MODEL, 't', tokens),
        maxTokens: 4,
        priority: 0,
        kvSources: [],
      },
      0,
    ),
  );
  events.run(10_000);
  return steps;
}

describe("the twin shares the node's policy code", () => {
  it.each([8192, 150])(
    'with a prefill budget of %i tokens, the live batch loop and the twin make the same engine calls',
    async (budget) => {
      const live = await liveNode(budget);
      expect(twinNode(budget)).toEqual(live);
    },
  );

  it('changing the budget moves both the same way', async () => {
    const [wide, narrow] = [await liveNode(8192), await liveNode(150)];
    expect(narrow).not.toEqual(wide);
    // All four prompts in one prefill under the wide budget; one or two per iteration under the narrow one.
    expect(wide[0]).toEqual(['prefill', ['r0', 'r1', 'r2', 'r3']]);
    expect(narrow[0]).toEqual(['prefill', ['r0']]);
    expect([twinNode(8192)[0], twinNode(150)[0]]).toEqual([wide[0], narrow[0]]);
  });
});
