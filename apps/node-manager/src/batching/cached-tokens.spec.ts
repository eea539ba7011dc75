// usage.prompt_tokens_details.cached_tokens, exactly: the prompt tokens whose KV the node did not
// compute, whichever tier or peer it came from. Each case runs a request through the node's batch
// scheduler (reference engine on the CPU, real host and SSD pools, a real peer over gRPC) and
// checks what the first and the final token event report against the positions the engine
// actually ran through its prefill passes.
import { create } from '@bufbuild/protobuf';
import { chunkBlockKeys, chunkKeys } from '@mnemo/kv-core';
import { ReferenceEngine, type CrossModelPlan } from '@mnemo/engine';
import { InferenceRequestSchema, KvSourceSchema, type KvSource } from '@mnemo/proto';
import { ServiceMetrics, type Clock } from '@mnemo/service-kit';
import { GREEDY, MODEL, toks } from '../../test/conversation.fixture.js';
import { startPeerNode, type PeerNode } from '../../test/peer-node.fixture.js';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import type { CrossModelPort } from '../droidspeak/cross-model.reuse.js';
import { NO_PROMPT_STORE, type PromptStore } from '../kv-store/prompt-store.port.js';
import { ChunkPeerClient } from '../peers/chunk-peer.client.js';
import { PeerAwarePromptStore } from '../peers/peer-aware.prompt-store.js';
import { PassCosts, type PassSeq } from '../shared/pass.costs.js';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from './sequence.store.js';
import type { TokenEventInit, TokenSink } from './token.sink.port.js';
import { batchSchedulerOf } from '../../test/batch-scheduler.fixture.js';

const TENANT = 't';
const clock: Clock = { monotonicMs: () => performance.now(), unixMs: () => Date.now() };
const config = {
  NODE_ID: 'n',
  NODE_MAX_BATCH: 8,
  NODE_MAX_PREFILL_TOKENS: 8192,
  NODE_PREFIX_CACHE: 'on',
  NODE_KV_WARM: 'off',
} as NodeManagerConfig;

class InboxRecorder implements TokenSink {
  readonly events: TokenEventInit[] = [];
  emit(_seq: Sequence, event: TokenEventInit): void {
    this.events.push(event);
  }
}

interface Answer {
  /** Usage of the first token event and of the final one. */
  readonly first: TokenEventInit['usage'];
  readonly last: TokenEventInit['usage'];
  /** Positions the engine ran through prefill passes for this request. */
  readonly computed: number;
  readonly out: number[];
}

/** The node's cost meter, keeping each pass it was told of. */
class RecordedPasses extends PassCosts {
  readonly passes_: Array<{ seqs: readonly PassSeq[]; ms: number }> = [];
  override prefillPass(seqs: readonly PassSeq[], ms: number): void {
    this.passes_.push({ seqs, ms });
    super.prefillPass(seqs, ms);
  }
}

/** One node's batch scheduler over a real engine and prompt store; `ask` runs one request to its end. */
function nodeOver(engine: ReferenceEngine, prompts: PromptStore, crossModel?: CrossModelPort) {
  const store = new SequenceStore();
  const costs = new RecordedPasses();
  const sink = new InboxRecorder();
  const metrics = new ServiceMetrics('cached-tokens-test');
  const sut = batchSchedulerOf(
    { store, engine, sink, config, clock, metrics },
    prompts,
    undefined,
    crossModel,
    undefined,
    undefined,
    costs,
  );
  let n = 0;
  const ask = async (tokens: number[], opts: { model?: string; kvSources?: KvSource[]; maxTokens?: number } = {}): Promise<Answer> => {
    const model = opts.model ?? MODEL;
    const request = create(InferenceRequestSchema, {
      requestId: `r${++n}`,
      tenant: TENANT,
      model,
      tokens,
      chunkKeys: chunkKeys(model, TENANT, tokens),
      replySubject: '_INBOX.x',
      sampling: { temperature: 0, topP: 1, seed: 0n, maxTokens: opts.maxTokens ?? 20 },
      kvSources: opts.kvSources ?? [],
    });
    const before = engine.stats().prefillTokens;
    store.add(
      new Sequence(
        request,
        engine.models().find((m) => m.id === model)!,
        store.arrivalSeq(),
        clock.monotonicMs(),
      ),
    );
    while (await sut.runIteration());
    const events = sink.events.filter((e) => e.requestId === request.requestId);
    expect(events.at(-1)?.done).toBe(true);
    return {
      first: events[0]!.usage,
      last: events.at(-1)!.usage,
      computed: engine.stats().prefillTokens - before,
      out: events.flatMap((e) => e.tokens ?? []),
    };
  };
  return { ask, costs };
}

/** The exactness rule, and the count the case expects. */
function expectCached(a: Answer, promptTokens: number, cached: number): void {
  expect(a.first?.cachedTokens).toBe(cached);
  expect(a.last?.cachedTokens).toBe(cached);
  expect(a.last?.promptTokens).toBe(promptTokens);
  expect(a.computed).toBe(promptTokens - cached);
}

// Turn 1: 600 tokens; 20 generated leave KV of 619 positions: 38 whole blocks (608 tokens),
// two whole chunks and a partial one. Turn 2 extends it by 40 tokens.
const TURN1 = toks(600, 1);
const REUSABLE = 608;
const turn2Of = (t1: Answer) => [...TURN1, ...t1.out, ...toks(40, 5)];

describe('cached_tokens at the node', () => {
  // A generous per-chunk deadline: on a loaded machine a loopback chunk can miss the default 500 ms, and a miss recomputes (0 cached).
  const client = new ChunkPeerClient({ timeoutMs: 10_000, deadlineBaseMs: 5000 });
  const nodes: PeerNode[] = [];
  const peerNode = async (opts: Parameters<typeof startPeerNode>[0] = {}) => {
    const p = await startPeerNode(opts);
    nodes.push(p);
    return { peer: p, ...nodeOver(p.engine, new PeerAwarePromptStore(p.store, p.store, client)) };
  };
  afterAll(async () => {
    client.close();
    for (const p of nodes) await p.close();
  });

  it('nothing held: 0, every position computed', async () => {
    const { ask } = await peerNode();
    expectCached(await ask(TURN1), 600, 0);
  });

  it('the device prefix cache: the whole blocks the last turn left', async () => {
    const { ask } = await peerNode();
    const t1 = await ask(TURN1);
    const turn2 = turn2Of(t1);
    expectCached(await ask(turn2), turn2.length, REUSABLE);
  });

  it.each<[string, number, 'mem' | 'ssd']>([
    ['the host pool', 8 * 1024 * 1024, 'mem'],
    ['the SSD pool (a host pool too small for a chunk)', 64 * 1024, 'ssd'],
  ])('%s, after the device let the turn go: device blocks and restored ones together', async (_name, hostBytes, tier) => {
    // 56 device blocks: a 760-token filler pushes most of turn 1 off the device.
    const { ask, peer, costs } = await peerNode({ kvBlocks: 56, hostBytes });
    const t1 = await ask(TURN1);
    await peer.store.settle();
    await ask(toks(760, 9), { maxTokens: 2 });
    await peer.store.settle();
    const turn2 = turn2Of(t1);
    const onDevice = peer.engine.cachedTokens({ seqId: 'q', model: MODEL, tokens: turn2, sampling: GREEDY, cacheSalt: TENANT });
    expect(onDevice).toBeLessThan(REUSABLE);
    const hits = { ...peer.store.counters.hitTokens };
    expectCached(await ask(turn2), turn2.length, REUSABLE);
    const restored = peer.store.counters.hitTokens[tier] - hits[tier];
    expect(restored).toBeGreaterThan(0);
    // The node's cost meter was told of the pass, with the restore's tokens under the tier they came from.
    const pass = costs.passes_.at(-1)!.seqs[0]!;
    expect(pass).toMatchObject({ promptTokens: turn2.length, cachedTokens: REUSABLE });
    expect(pass.restored?.[tier === 'mem' ? 'host' : 'ssd']).toBeGreaterThan(0);
  });

  it('a peer: whole chunks and the partial one fetched from the node that ran the last turn', async () => {
    const a = await peerNode();
    const b = await peerNode();
    const t1 = await a.ask(TURN1);
    await a.peer.store.settle();
    const turn2 = turn2Of(t1);
    const keys = chunkKeys(MODEL, TENANT, turn2);
    // What the scheduler stamps: a's whole chunks of the prompt and the partial chunk turn 1 left there (6 blocks into chunk 2).
    const partial = chunkBlockKeys(MODEL, TENANT, turn2, keys, 2)[5]!;
    const kvSources = [create(KvSourceSchema, { nodeId: 'a', grpcAddress: a.peer.address, chunkKeys: [...keys.slice(0, 2), partial] })];
    expectCached(await b.ask(turn2, { kvSources }), turn2.length, REUSABLE);
    expect(b.costs.passes_.at(-1)!.seqs[0]!.restored?.peer).toBeGreaterThan(0);
  });

  it(
    "DroidSpeak: a derived model over its base model's KV recomputes some layers " +
      'of every reused position, so none counts (kv_reuse says what was reused)',
    async () => {
      const BASE = MODEL;
      const FT = 'mnemo-tiny-ft';
      const engine = await ReferenceEngine.create({ models: [BASE, FT], backend: 'cpu', kvBlocks: 256 });
      try {
        const prompt = toks(45, 3);
        const UNTIL = 32;
        // The base model's KV of the prompt, as the node's tiers would hold it.
        await engine.prefill([{ seqId: 'base', model: BASE, tokens: prompt, sampling: GREEDY }]);
        const baseKv = new Map(
          Array.from({ length: 4 }, (_, l) => [
            l,
            engine.exportKv('base', { layerStart: l, layerEnd: l + 1, tokenStart: 0, tokenEnd: UNTIL }),
          ]),
        );
        engine.release('base');
        // Port double for the plan service and the base's stored KV: the plan the profiler's frontier would give.
        const plan = (): CrossModelPlan => ({
          baseModel: BASE,
          pattern: { r1: 0, u1: 0, r2: 2 },
          until: UNTIL,
          load: async (l) => baseKv.get(l)!,
        });
        const crossModel: CrossModelPort = { crossModelFor: () => (deviceTokens) => (deviceTokens > 0 ? undefined : plan()) };
        const { ask } = nodeOver(engine, NO_PROMPT_STORE, crossModel);
        const a = await ask(prompt, { model: FT });
        expectCached(a, prompt.length, 0);
        expect(a.last?.kvReuse).toMatchObject({ baseModel: BASE, reusedTokens: UNTIL, recomputedLayers: [0, 1] });
      } finally {
        await engine.close();
      }
    },
  );
});
