import type { MessageInitShape } from '@bufbuild/protobuf';
// Advisory prefetch on the node: chunks another node holds are pulled into the host pool ahead
// of the request and promoted to free device blocks; the request then finds them on the device
// (or, with promotion off or purged, restores them from host memory); forgetting drops them; under
// host or device pressure prefetched copies go first (cooperative memory) and the node's own KV stays.
// Real pools, real gRPC, reference engine on the CPU.
import { chunkKeys, ErrorCode } from '@mnemo/kv-core';
import { create } from '@bufbuild/protobuf';
import { ForgetRequestSchema, PrefetchRequestSchema } from '@mnemo/proto';
import { ServiceMetrics, systemClock } from '@mnemo/service-kit';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { ReferenceEngine } from '@mnemo/engine';
import { ChunkPeerClient } from '../peers/chunk-peer.client.js';
import { converse, MODEL, storedPrompt, toks } from '../../test/conversation.fixture.js';
import { startPeerNode, type PeerNode } from '../../test/peer-node.fixture.js';
import { NodeMetrics } from '../shared/node.metrics.js';
import { AdvisoryArrivals } from './advisory.arrivals.js';
import { AdvisoryRegistry } from './advisory.registry.js';
import { ForgetPrefetchUseCase } from './forget-prefetch.use-case.js';
import { ForgetPrefetchCommand, PrefetchCommand } from './prefetch.command.js';
import { PrefetchUseCase } from './prefetch.use-case.js';

const config = { NODE_ID: 'b', NODE_PREFETCH_TTL_MS: 60_000, NODE_PREFETCH_MAX_ADVISORIES: 2 } as NodeManagerConfig;

describe(PrefetchUseCase.name, () => {
  let a: PeerNode;
  let b: PeerNode;
  let client: ChunkPeerClient;
  let sut: PrefetchUseCase;
  let forget: ForgetPrefetchUseCase;
  let arrivals: AdvisoryArrivals;
  let metrics: NodeMetrics;
  const session = toks(800, 3);
  const keys = chunkKeys(MODEL, 't', session);
  const next = [...session, ...toks(20, 8)];
  /** The next turn as a fresh engine answers it: tokens and KV to compare with, bit for bit. */
  let expected: Awaited<ReturnType<typeof converse>>;
  const sameBits = (x: Float32Array, y: Float32Array) =>
    Buffer.compare(Buffer.from(x.buffer, x.byteOffset, x.byteLength), Buffer.from(y.buffer, y.byteOffset, y.byteLength)) === 0;

  beforeAll(async () => {
    a = await startPeerNode();
    await converse(a.engine, 's', session, 1);
    await a.store.settle();
    const fresh = await ReferenceEngine.create({ models: [MODEL], backend: 'cpu', kvBlocks: 256 });
    expected = await converse(fresh, 'f', next, 2);
    await fresh.close();
  });
  // 1 MiB of host memory: room for 3 of mnemo-tiny's 256 KiB chunks (stride-rounded).
  async function startB(kvBlocks = 256, hostBytes = 1024 * 1024): Promise<void> {
    b = await startPeerNode({ hostBytes, kvBlocks });
    const advisories = new AdvisoryRegistry();
    sut = new PrefetchUseCase(b.engine, b.store, client, advisories, config, systemClock);
    forget = new ForgetPrefetchUseCase(b.store, advisories);
    metrics = new NodeMetrics(new ServiceMetrics('prefetch-test'));
    arrivals = new AdvisoryArrivals(advisories, b.store, metrics, systemClock);
  }
  beforeEach(async () => {
    client = new ChunkPeerClient(10_000);
    await startB();
  });
  afterEach(async () => {
    await sut.settled();
    client.close();
    await b.close();
  });
  afterAll(async () => {
    await a.close();
  });

  type AdviseExtra = Partial<Omit<MessageInitShape<typeof PrefetchRequestSchema>, '$typeName' | '$unknown'>>;
  const advise = (id: string, extra: AdviseExtra = {}) =>
    new PrefetchCommand(
      create(PrefetchRequestSchema, {
        advisoryId: id,
        sessionId: 'sess',
        model: MODEL,
        chunkKeys: keys,
        sources: [{ nodeId: 'a', grpcAddress: a.address, chunkKeys: keys }],
        ...extra,
      }),
    );

  it("with promotion off: pulls the session's chunks into the host pool; the request then restores them from host memory", async () => {
    b.store.promotion.enabled = false;
    expect(sut.execute(advise('adv-1'))).toBe(3);
    await sut.settled();
    expect(keys.every((k) => b.store.holdsOnHost(MODEL, k))).toBe(true);
    expect(b.store.peerCounters.prefetchedChunks).toBe(3);
    // Prefetched copies are never written to SSD (the peer keeps them).
    await b.store.settle();
    expect(keys.some((k) => b.store.tiers.model(MODEL).table.layersIn(k, 'ssd').length > 0)).toBe(false);
    const turn = await converse(b.engine, 'r', next, 2, (d) => b.store.restorePlan(storedPrompt(next), d));
    expect(turn.restored).toBe(768);
    expect(b.engine.staging.stats(MODEL).staged).toBe(0);
    expect(turn.out).toEqual(expected.out);
    expect(sameBits(turn.kv, expected.kv)).toBe(true);
    expect(b.store.counters.hitTokens.mem).toBe(768);
    // Used: no longer a purge candidate.
    expect(b.store.prefetched.size).toBe(0);
  });

  it(
    'promotes the pulled chunks to free device blocks: the request ' + 'finds them there, nothing restored, same answer bit for bit',
    async () => {
      sut.execute(advise('adv-1'));
      await sut.settled();
      expect(b.engine.staging.stats(MODEL)).toMatchObject({ staged: 3, chunks: 3 });
      expect(b.store.promotion.stats().staged).toBe(3);
      const turn = await converse(b.engine, 'r', next, 2, (d) => b.store.restorePlan(storedPrompt(next), d));
      expect(turn).toMatchObject({ cached: 768, restored: 0 });
      expect(b.engine.staging.stats(MODEL)).toMatchObject({ adopted: 3, chunks: 0 });
      expect(turn.out).toEqual(expected.out);
      expect(sameBits(turn.kv, expected.kv)).toBe(true);
      expect(b.store.prefetched.size).toBe(0);
    },
  );

  it(
    "under device pressure the node's own sequence purges promoted " + 'chunks, later chunks first; the rest comes from host, still exact',
    async () => {
      await b.close();
      // 64 blocks: 3 promoted chunks take 48, the node's own 600-token prompt needs 38. Host room for all.
      await startB(64, 4 * 1024 * 1024);
      sut.execute(advise('adv-1'));
      await sut.settled();
      await converse(b.engine, 'own', toks(600, 9), 1);
      expect(b.engine.staging.stats(MODEL)).toMatchObject({ purged: 2, chunks: 1 });
      const turn = await converse(b.engine, 'r', next, 2, (d) => b.store.restorePlan(storedPrompt(next), d));
      expect(turn).toMatchObject({ cached: 768, restored: 512 });
      expect(turn.out).toEqual(expected.out);
      expect(sameBits(turn.kv, expected.kv)).toBe(true);
    },
  );

  it('does not pull what the host already holds, and queues nothing without sources', async () => {
    sut.execute(advise('adv-1'));
    await sut.settled();
    expect(sut.execute(advise('adv-2'))).toBe(0);
    expect(sut.execute(advise('adv-2', { sources: [], chunkKeys: ['ab'.repeat(16)] }))).toBe(0);
  });

  it('forget drops what the advisory prefetched and nobody used', async () => {
    sut.execute(advise('adv-1'));
    await sut.settled();
    expect(forget.execute(new ForgetPrefetchCommand(create(ForgetRequestSchema, { advisoryId: 'adv-1' })))).toBe(keys.length);
    expect(keys.some((k) => b.store.holdsOnHost(MODEL, k))).toBe(false);
    expect(b.store.tiers.usage('mem').used).toBe(0);
    expect(b.engine.staging.stats(MODEL)).toMatchObject({ unstaged: 3, chunks: 0 });
    // Unknown advisory: same reply, nothing changes.
    expect(forget.execute(new ForgetPrefetchCommand(create(ForgetRequestSchema, { advisoryId: 'nope' })))).toBe(0);
  });

  it('forget by session drops every advisory of that session', async () => {
    sut.execute(advise('adv-1', { chunkKeys: keys.slice(0, 1) }));
    sut.execute(advise('adv-2', { chunkKeys: keys.slice(1) }));
    await sut.settled();
    expect(forget.execute(new ForgetPrefetchCommand(create(ForgetRequestSchema, { sessionId: 'sess' })))).toBe(keys.length);
  });

  it("under host pressure purges prefetched copies first, later layers first, and keeps the node's own KV", async () => {
    sut.execute(advise('adv-1'));
    await sut.settled();
    // The node's own conversation needs 2 chunks of host memory.
    const own = toks(600, 9);
    await converse(b.engine, 'own', own, 1);
    await b.store.settle();
    const m = b.store.tiers.model(MODEL);
    expect(chunkKeys(MODEL, 't', own).every((k) => m.table.holdsChunk(k, 'mem'))).toBe(true);
    expect(b.store.prefetched.purgedSegments).toBeGreaterThanOrEqual(4);
    // What is left of the prefetch is a prefix of layers (later layers went first).
    for (const k of keys) {
      const layers = m.table.layersIn(k, 'mem');
      expect(layers).toEqual(layers.map((_, i) => i));
    }
    // One stamp per advisory: its head chunk is not the oldest, and keeps at least what later ones keep.
    const held = keys.map((k) => m.table.layersIn(k, 'mem').length);
    expect(held[0]).toBeGreaterThan(0);
    expect(held).toEqual([...held].sort((x, y) => y - x));
  });

  describe("judging an advisory when its session's request arrives (kv-core judgeAdvisoryArrival)", () => {
    const verdicts = async () =>
      (await metrics.advisoryOutcomes.get()).values.map((v) => `${v.labels.outcome}/${v.labels.reason}=${v.value}`).sort();
    // A key of a prompt node a never saw: its pull is a miss.
    const unknown = chunkKeys(MODEL, 't', toks(256, 77));

    it('hit: every pulled chunk is here; judged once', async () => {
      sut.execute(advise('adv-1'));
      await sut.settled();
      expect(arrivals.arrived('sess', MODEL)).toEqual([{ outcome: 'hit', reason: 'found' }]);
      expect(arrivals.arrived('sess', MODEL)).toEqual([]);
      expect(await verdicts()).toEqual(['hit/found=1']);
    });

    it('hit: nothing to pull, the node held the prefix already', async () => {
      sut.execute(advise('adv-1'));
      await sut.settled();
      arrivals.arrived('sess', MODEL);
      expect(sut.execute(advise('adv-2'))).toBe(0);
      expect(arrivals.arrived('sess', MODEL)).toEqual([{ outcome: 'hit', reason: 'held' }]);
    });

    it.each<[string, string[], string]>([
      ['absent: no pulled chunk landed', unknown, 'missed/absent=1'],
      ['partial: one of four did not land', [...keys, ...unknown], 'missed/partial=1'],
    ])('missed, %s', async (_n, chunkKeys, verdict) => {
      sut.execute(advise('adv-1', { chunkKeys, sources: [{ nodeId: 'a', grpcAddress: a.address, chunkKeys }] }));
      await sut.settled();
      arrivals.arrived('sess', MODEL);
      expect(await verdicts()).toEqual([verdict]);
    });

    it('missed: the host copies were withdrawn before the request came (promotion off)', async () => {
      b.store.promotion.enabled = false;
      sut.execute(advise('adv-1'));
      await sut.settled();
      b.store.forget('adv-1');
      expect(arrivals.arrived('sess', MODEL)).toEqual([{ outcome: 'missed', reason: 'absent' }]);
    });

    it('judges nothing for another session, another model, or an advisory forgotten first', async () => {
      sut.execute(advise('adv-1'));
      await sut.settled();
      expect(arrivals.arrived('other', MODEL)).toEqual([]);
      expect(arrivals.arrived('sess', 'another-model')).toEqual([]);
      expect(arrivals.arrived('', MODEL)).toEqual([]);
      forget.execute(new ForgetPrefetchCommand(create(ForgetRequestSchema, { advisoryId: 'adv-1' })));
      expect(arrivals.arrived('sess', MODEL)).toEqual([]);
      expect(await verdicts()).toEqual([]);
    });
  });

  it.each<[string, Parameters<typeof advise>[1], ErrorCode]>([
    ['no advisory id', { advisoryId: '' }, ErrorCode.InvalidRequest],
    ['a model not served', { model: 'nope' }, ErrorCode.ModelNotFound],
    ['a malformed key', { chunkKeys: ['xyz'] }, ErrorCode.InvalidRequest],
    ['a source that is no address', { sources: [{ nodeId: 'a', grpcAddress: 'a b', chunkKeys: [] }] }, ErrorCode.InvalidRequest],
    ['an expiry in the past', { expiresAtMs: 1n }, ErrorCode.InvalidRequest],
  ])('refuses %s and changes nothing', (_n, extra, code) => {
    expect(() => sut.execute(advise('adv-x', extra))).toThrow(expect.objectContaining({ code }));
    expect(b.store.tiers.usage('mem').used).toBe(0);
  });

  it('refuses a flood past the advisory limit (overloaded)', () => {
    sut.execute(advise('f1', { sources: [] }));
    sut.execute(advise('f2', { sources: [] }));
    expect(() => sut.execute(advise('f3', { sources: [] }))).toThrow(expect.objectContaining({ code: ErrorCode.Overloaded }));
    // The same advisory again is a refresh, not a new one.
    expect(sut.execute(advise('f2', { sources: [] }))).toBe(0);
  });
});
