// Symphony on the node, done-when "a session moving between nodes keeps bit-identical answers":
// turn 2 on node B, its prefix fetched layer by layer from node A over gRPC, gives the same KV
// (hence logits) and tokens as turn 2 on A and as a fresh prefill — reference engine, CPU. A
// corrupting peer makes the prefill fail and the retry recompute: never wrong tokens.
import { Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { loadGrpcServices } from '@mnemo/proto';
import { FetchChunksUseCase } from '../chunks/fetch-chunks.use-case.js';
import { bits, converse, GREEDY, MODEL, storedPrompt, toks } from '../../test/conversation.fixture.js';
import { startPeerNode, type PeerNode } from '../../test/peer-node.fixture.js';
import { ChunkPeerClient } from './chunk-peer.client.js';
import { PeerAwarePromptStore } from './peer-aware.prompt-store.js';
import type { StoredPrompt } from '../kv-store/kv.store.js';

describe(PeerAwarePromptStore.name, () => {
  let a: PeerNode;
  let b: PeerNode;
  let client: ChunkPeerClient;
  const turn1 = toks(600, 1);
  let turn2: number[];
  let fresh: Awaited<ReturnType<typeof converse>>;

  beforeAll(async () => {
    a = await startPeerNode();
    b = await startPeerNode();
    client = new ChunkPeerClient(10_000);
    const first = await converse(a.engine, 't1', turn1, 20, (d) => a.store.restorePlan(storedPrompt(turn1), d));
    await a.store.settle();
    turn2 = [...turn1, ...first.out, ...toks(40, 5)];
    const clean = await startPeerNode();
    fresh = await converse(clean.engine, 'f', turn2, 12);
    await clean.close();
  });
  afterAll(async () => {
    client.close();
    await a.close();
    await b.close();
  });

  // What the scheduler passes on: A's whole chunks of the prompt and the partial chunk turn 1 left
  // there (its KV of 619 tokens ends 6 blocks into chunk 2).
  const turn1Partial = () => storedPrompt(turn2).blockKeys!(2)[5]!;
  const withSource = (tokens: number[], address: string): StoredPrompt => ({
    ...storedPrompt(tokens),
    sources: [{ nodeId: 'a', address, chunkKeys: [...storedPrompt(turn1).chunkKeys, turn1Partial()] }],
  });

  // A's chunks served by a real gRPC server that rewrites what it sends: a corrupting or a stale peer.
  type Served = { key: string; layerStart: number; layerEnd: number; payload?: Uint8Array };
  const servePeer = async (rewrite: (c: Served, layerStart: number) => object) => {
    const useCase = new FetchChunksUseCase(a.store);
    const server = new Server();
    server.addService(loadGrpcServices().ChunkTransfer, {
      FetchChunks: async (call: ServerWritableStream<{ keys: string[]; layerStart: number; layerEnd: number }, unknown>) => {
        for await (const c of useCase.execute(call.request.keys, call.request.layerStart, call.request.layerEnd))
          call.write(rewrite(c as Served, call.request.layerStart));
        call.end();
      },
    });
    const port = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
    );
    return { address: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
  };
  // The prefill whose restore fails: no output, the sequence dropped, one failure counted.
  const prefillFails = async (c: PeerNode, sut: PeerAwarePromptStore, p: StoredPrompt) => {
    await expect(
      c.engine.prefill([
        { seqId: 'x', model: MODEL, tokens: turn2, sampling: GREEDY, cacheSalt: 't', restore: (d) => sut.restorePlan(p, d) },
      ]),
    ).resolves.toEqual([]);
    expect(c.engine.hasSequence('x')).toBe(false);
    expect(sut.counters.failures).toBe(1);
  };

  /**
   * Turn 2 on a fresh node whose source is a rewriting peer: the first prefill fails, `restorable`
   * tokens are still offered after it, and the retry answers as the fresh prefill, bit for bit.
   */
  const retryAfterFaultyPeer = async (rewrite: (c: Served, layerStart: number) => object, restorable: number) => {
    const peer = await servePeer(rewrite);
    const c = await startPeerNode();
    try {
      const sut = new PeerAwarePromptStore(c.store, c.store, client);
      const p = withSource(turn2, peer.address);
      await prefillFails(c, sut, p);
      expect(sut.restorableUntil(p, 0)).toBe(restorable);
      const retried = await converse(c.engine, 'x', turn2, 12, (d) => sut.restorePlan(p, d));
      expect(retried.out).toEqual(fresh.out);
      expect(bits(retried.kv)).toEqual(bits(fresh.kv));
      return { sut, retried };
    } finally {
      peer.close();
      await c.close();
    }
  };

  it(
    'turn 2 on another node, its prefix fetched from the first, ' + 'equals a fresh prefill and the node that stayed, bit for bit',
    async () => {
      expect(a.store.holds(MODEL, turn1Partial())).toBe(true);
      const sut = new PeerAwarePromptStore(b.store, b.store, client);
      const p = withSource(turn2, a.address);
      // Both whole chunks and the partial one: everything turn 1 computed.
      expect(sut.restorableUntil(p, 0)).toBe(608);
      const moved = await converse(b.engine, 'm', turn2, 12, (d) => sut.restorePlan(p, d));
      expect(moved.restored).toBe(608);
      expect(sut.counters).toMatchObject({ plans: 1, restoredTokens: 608, failures: 0 });
      expect(sut.counters.blockedMs).toBeGreaterThanOrEqual(0);
      const stayed = await converse(a.engine, 's', turn2, 12, (d) => a.store.restorePlan(storedPrompt(turn2), d));
      expect(fresh.cached).toBe(0);
      expect(moved.out).toEqual(fresh.out);
      expect(stayed.out).toEqual(fresh.out);
      expect(bits(moved.kv)).toEqual(bits(fresh.kv));
      expect(bits(stayed.kv)).toEqual(bits(fresh.kv));
      // The fetched chunks now live on B: turn 3 there needs no peer.
      await b.store.settle();
      expect(storedPrompt(turn1).chunkKeys.every((k) => b.store.holdsOnHost(MODEL, k))).toBe(true);
      // Turn 1's partial chunk was restored but not kept: turn 2's longer one (its KV ends 9 blocks into chunk 2) is B's own.
      expect(b.store.holds(MODEL, turn1Partial())).toBe(false);
      expect(b.store.holdsOnHost(MODEL, storedPrompt([...turn2, ...moved.out]).blockKeys!(2)[8]!)).toBe(true);
    },
  );

  it(
    'a corrupting peer drops its sequence from the pass (no output); ' + 'the retry leaves that peer out and recomputes the same tokens',
    async () => {
      // Layer 2 of every chunk arrives with one flipped bit under the original CRC.
      const { retried } = await retryAfterFaultyPeer(
        (c, layerStart) =>
          layerStart === 2 && c.payload ? { ...c, payload: Uint8Array.from(c.payload, (x, i) => (i === 7 ? x ^ 0x10 : x)) } : c,
        0,
      );
      expect(retried.restored).toBe(0);
    },
  );
  it(
    'a peer that says it no longer holds one chunk is left out for that chunk only: ' +
      'the retry still fetches the chunk before it from the same peer, bit for bit',
    async () => {
      const gone = storedPrompt(turn1).chunkKeys[1]!;
      // The peer is still a source, for the run of chunks before the one it lost.
      const { sut, retried } = await retryAfterFaultyPeer(
        (c) => (c.key === gone ? { key: c.key, layerStart: c.layerStart, layerEnd: c.layerEnd, missing: true } : c),
        256,
      );
      expect(retried.restored).toBe(256);
      expect(sut.counters).toMatchObject({
        plans: 2,
        failures: 1,
        restoredTokens: 256,
        failuresBy: { stale: 1, stale_partial: 0, unreachable: 0, pass: 0 },
      });
    },
  );

  it(
    "a peer that no longer holds the partial chunk a session's last turn left is counted apart (stale_partial): " +
      'the retry fetches the whole chunks before it from the same peer, bit for bit',
    async () => {
      const gone = turn1Partial();
      const { sut, retried } = await retryAfterFaultyPeer(
        (c) => (c.key === gone ? { key: c.key, layerStart: c.layerStart, layerEnd: c.layerEnd, missing: true } : c),
        512,
      );
      expect(retried.restored).toBe(512);
      expect(sut.counters.failuresBy).toEqual({ stale: 0, stale_partial: 1, unreachable: 0, pass: 0 });
    },
  );

  it(
    'a peer that accepts the fetch and never answers costs the batch one chunk ' +
      'deadline: the other sequence gets its token, the hung one recomputes',
    async () => {
      // A real gRPC server that takes the call and never writes or ends (a stopped process would look the same).
      const server = new Server();
      const open: Array<ServerWritableStream<unknown, unknown>> = [];
      server.addService(loadGrpcServices().ChunkTransfer, {
        FetchChunks: (call: ServerWritableStream<unknown, unknown>) => void open.push(call),
      });
      const port = await new Promise<number>((res, rej) =>
        server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
      );
      const c = await startPeerNode();
      const peers = new ChunkPeerClient({ timeoutMs: 30_000, deadlineBaseMs: 300 });
      try {
        const sut = new PeerAwarePromptStore(c.store, c.store, peers);
        const p = withSource(turn2, `127.0.0.1:${port}`);
        const other = toks(300, 9);
        const alone = await startPeerNode();
        const [plainAlone] = await alone.engine.prefill([{ seqId: 'o', model: MODEL, tokens: other, sampling: GREEDY, cacheSalt: 'u' }]);
        await alone.close();
        const started = Date.now();
        const outs = await c.engine.prefill([
          { seqId: 'x', model: MODEL, tokens: turn2, sampling: GREEDY, cacheSalt: 't', restore: (d) => sut.restorePlan(p, d) },
          { seqId: 'o', model: MODEL, tokens: other, sampling: GREEDY, cacheSalt: 'u' },
        ]);
        const tookMs = Date.now() - started;
        expect(outs.map((o) => [o.seqId, o.token])).toEqual([['o', plainAlone!.token]]);
        expect(open.length).toBeGreaterThan(0);
        // Bounded by the deadline (300 ms plus the chunk's size over the prior link speed), far from the stream's 30 s.
        expect(tookMs).toBeLessThan(10_000);
        expect(peers.counters.deadlines).toBeGreaterThan(0);
        expect(sut.counters.failures).toBe(1);
        expect(sut.counters.failuresBy).toEqual({ stale: 0, stale_partial: 0, unreachable: 1, pass: 0 });
        expect(sut.restorableUntil(p, 0)).toBe(0);
        // The failed restore asks the hung peer nothing more: only the first window of layer streams
        // ever went out, and none follows once their deadlines have passed.
        const asked = open.length;
        await new Promise((r) => setTimeout(r, 1500));
        expect(open.length).toBe(asked);
        expect(asked).toBeLessThanOrEqual(3);
        const retried = await converse(c.engine, 'x', turn2, 12, (d) => sut.restorePlan(p, d));
        expect(retried.restored).toBe(0);
        expect(retried.out).toEqual(fresh.out);
      } finally {
        peers.close();
        server.forceShutdown();
        await c.close();
      }
    },
  );
});
