// Piece 1 of Symphony on the node: FetchChunks serves real, verified KV from the host and SSD
// tiers, and a peer's corrupt or truncated chunks are misses. Real pools, real gRPC on loopback.
import { Server, ServerCredentials, type ServerWritableStream } from '@grpc/grpc-js';
import { chunkKeys } from '@mnemo/kv-core';
import { crc32c } from '@mnemo/native-cuda';
import { loadGrpcServices } from '@mnemo/proto';
import { FetchChunksUseCase } from '../chunks/fetch-chunks.use-case.js';
import { bits, converse, MODEL, storedPrompt, toks } from '../../test/conversation.fixture.js';
import { startPeerNode, type PeerNode } from '../../test/peer-node.fixture.js';
import { ChunkPeerClient } from './chunk-peer.client.js';

type Tamper = (c: { payload?: Uint8Array; crc32c?: number; key: string }) => Record<string, unknown>;

/**
 * A peer that serves the real chunks of `node`, passed through `tamper` on the way out; with
 * `hangAfter`, it sends that many and then neither sends nor ends (a stopped process).
 */
async function tamperingPeer(node: PeerNode, tamper: Tamper, hangAfter = Infinity): Promise<{ address: string; close: () => void }> {
  const useCase = new FetchChunksUseCase(node.store);
  const server = new Server();
  server.addService(loadGrpcServices().ChunkTransfer, {
    FetchChunks: async (call: ServerWritableStream<{ keys: string[]; layerStart: number; layerEnd: number }, unknown>) => {
      let sent = 0;
      for await (const c of useCase.execute(call.request.keys, call.request.layerStart, call.request.layerEnd)) {
        if (sent++ >= hangAfter) return;
        call.write(tamper(c as never));
      }
      call.end();
    },
  });
  const port = await new Promise<number>((res, rej) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
  );
  return { address: `127.0.0.1:${port}`, close: () => server.forceShutdown() };
}

describe(ChunkPeerClient.name, () => {
  const turn = toks(800, 1);
  const keys = chunkKeys(MODEL, 't', turn);
  let node: PeerNode;
  let sut: ChunkPeerClient;
  let segBytes: number;
  const expected: Float32Array[] = [];

  beforeAll(async () => {
    // A host pool smaller than the three chunks: some are on SSD only.
    node = await startPeerNode({ hostBytes: 512 * 1024 });
    const input = { seqId: 's', model: MODEL, tokens: turn, sampling: { temperature: 0, topP: 1, seed: 0 }, cacheSalt: 't' };
    await node.engine.prefill([input]);
    for (let c = 0; c < keys.length; c++) expected.push(node.engine.exportChunk('s', c)!);
    node.engine.release('s');
    await node.store.settle();
    segBytes = node.store.segmentBytes(MODEL)!;
  });
  beforeEach(() => {
    sut = new ChunkPeerClient(10_000);
  });
  afterEach(() => sut.close());
  afterAll(async () => {
    await node.close();
  });

  const pull = async (address: string, ks: readonly string[], ls: number, le: number) => {
    const out = [];
    for await (const c of sut.fetch(address, ks, ls, le, (le - ls) * segBytes)) out.push(c);
    return out;
  };

  it('streams every chunk bit for bit from the host and the SSD tier, in request order', async () => {
    const m = node.store.tiers.model(MODEL);
    expect(keys.filter((k) => !m.table.holdsChunk(k, 'mem')).length).toBeGreaterThan(0);
    expect(keys.every((k) => m.table.holdsChunk(k, 'ssd'))).toBe(true);
    const got = await pull(node.address, keys, 0, 4);
    expect(got.map((c) => c.key)).toEqual(keys);
    got.forEach((c, i) => expect(bits(c.payload!)).toEqual(bits(expected[i]!)));
    expect(sut.counters).toMatchObject({ chunks: 3, misses: 0, bytes: 3 * 4 * segBytes });
    // The same bytes, on the link from that peer.
    expect(sut.bytesByPeer.get(node.address)).toBe(sut.counters.bytes);
  });

  it('serves a layer range', async () => {
    const [c] = await pull(node.address, [keys[1]!], 1, 3);
    expect(bits(c!.payload!)).toEqual(bits(expected[1]!.subarray((segBytes / 4) * 1, (segBytes / 4) * 3)));
  });

  it('answers keys it does not hold as misses, the rest as data', async () => {
    const unknown = 'ab'.repeat(16);
    const got = await pull(node.address, [keys[0]!, unknown], 0, 4);
    expect(got.map((c) => c.payload !== undefined)).toEqual([true, false]);
  });

  it.each<[string, Tamper]>([
    [
      'a flipped bit (CRC of the original)',
      (c) => ({ ...c, payload: c.payload && Uint8Array.from(c.payload, (b, i) => (i === 100 ? b ^ 1 : b)) }),
    ],
    [
      'a truncated payload (CRC of what was sent)',
      (c) => ({ ...c, payload: c.payload?.subarray(8), crc32c: c.payload && crc32c(c.payload.subarray(8)) }),
    ],
    ['a wrong CRC', (c) => ({ ...c, crc32c: ((c.crc32c ?? 0) + 1) >>> 0 })],
    ["another key's data", (c) => ({ ...c, key: 'cd'.repeat(16) })],
  ])('treats %s from a peer as a miss', async (_n, tamper) => {
    const peer = await tamperingPeer(node, tamper);
    try {
      const got = await pull(peer.address, keys, 0, 4);
      expect(got.map((c) => c.payload)).toEqual([undefined, undefined, undefined]);
      expect(sut.counters.misses).toBe(3);
    } finally {
      peer.close();
    }
  });

  it('turns an unreachable peer into misses, never an error', async () => {
    const got = await pull('127.0.0.1:1', keys.slice(0, 2), 0, 4);
    expect(got.map((c) => c.payload)).toEqual([undefined, undefined]);
  });

  it('holds the producer back while the consumer is slow (flow control), and still delivers all', async () => {
    const many = Array.from({ length: 60 }, (_, i) => keys[i % keys.length]!);
    const got: boolean[] = [];
    for await (const c of sut.fetch(node.address, many, 0, 4, 4 * segBytes)) {
      got.push(c.payload !== undefined);
      if (got.length === 1) await new Promise((r) => setTimeout(r, 300));
      // While we slept the server may only run ahead by what the HTTP/2 windows hold, not all 60.
      if (got.length === 1) expect(node.store.peerCounters.servedChunks).toBeLessThan(60);
    }
    expect(got.every(Boolean)).toBe(true);
    expect(got).toHaveLength(60);
  });

  it("restores fidelity: a chunk pulled into another node's host pool is the same KV", async () => {
    const other = await startPeerNode();
    try {
      const payloads = await pull(node.address, keys, 0, 4);
      await other.store.importChunks(
        MODEL,
        payloads.map((c, i) => ({ key: c.key, position: i, payload: c.payload! })),
      );
      expect(keys.every((k) => other.store.holdsOnHost(MODEL, k))).toBe(true);
      const next = [...turn, ...toks(30, 4)];
      const again = await converse(other.engine, 'x', next, 4, (d) => other.store.restorePlan(storedPrompt(next), d));
      expect(again.restored).toBe(768);
      const fresh = await converse(node.engine, 'f', next, 4);
      expect(fresh.restored).toBe(0);
      expect(again.out).toEqual(fresh.out);
      expect(bits(again.kv)).toEqual(bits(fresh.kv));
    } finally {
      await other.close();
    }
  });

  describe('bounds', () => {
    it('cuts off a message larger than the expected chunk at the gRPC layer, before it is buffered and checked', async () => {
      const huge = await tamperingPeer(node, (c) => ({
        ...c,
        payload: c.payload && Buffer.concat([c.payload, Buffer.alloc(4 * c.payload.length)]),
      }));
      try {
        const got = await pull(huge.address, keys, 0, 4);
        expect(got.map((c) => c.payload)).toEqual([undefined, undefined, undefined]);
        // Never reached the size and CRC check: grpc-js refused the message itself.
        expect(sut.counters).toMatchObject({ misses: 3, corrupt: 0 });
      } finally {
        huge.close();
      }
    });

    it("gives up on a peer that hangs mid-stream after the next chunk's deadline, not the stream's timeout", async () => {
      const hung = await tamperingPeer(node, (c) => c, 1);
      const client = new ChunkPeerClient({ timeoutMs: 30_000, deadlineBaseMs: 150 });
      try {
        const started = Date.now();
        const got = [];
        for await (const c of client.fetch(hung.address, keys, 0, 4, 4 * segBytes)) got.push(c.payload !== undefined);
        expect(got).toEqual([true, false, false]);
        expect(Date.now() - started).toBeLessThan(3_000);
        expect(client.counters).toMatchObject({ deadlines: 1, misses: 2 });
      } finally {
        client.close();
        hung.close();
      }
    });

    it('closes a channel idle past idleMs, and keeps at most maxChannels', async () => {
      let now = 0;
      const client = new ChunkPeerClient({ timeoutMs: 10_000, idleMs: 1000, maxChannels: 2, now: () => now });
      try {
        // Three message sizes to one peer: three channels wanted, two kept.
        for (const le of [1, 2, 3])
          for await (const c of client.fetch(node.address, [keys[0]!], 0, le, le * segBytes)) expect(c.payload).toBeDefined();
        expect(client.openChannels).toBe(2);
        expect(client.counters.evicted).toBe(1);
        now += 999;
        client.evictIdle();
        expect(client.openChannels).toBe(2);
        now += 1;
        client.evictIdle();
        expect(client.openChannels).toBe(0);
        // And a closed channel reopens when needed.
        const [again] = await (async () => {
          const out = [];
          for await (const c of client.fetch(node.address, [keys[0]!], 0, 4, 4 * segBytes)) out.push(c);
          return out;
        })();
        expect(again!.payload).toBeDefined();
      } finally {
        client.close();
      }
    });
  });

  describe('peer token (NODE_PEER_TOKEN)', () => {
    let guarded: PeerNode;
    beforeAll(async () => {
      guarded = await startPeerNode({ hostBytes: 512 * 1024, peerToken: 'sesame' });
      const input = { seqId: 's', model: MODEL, tokens: turn, sampling: { temperature: 0, topP: 1, seed: 0 }, cacheSalt: 't' };
      await guarded.engine.prefill([input]);
      guarded.engine.release('s');
      await guarded.store.settle();
    });
    afterAll(async () => {
      await guarded.close();
    });

    it.each<[string, string | undefined, boolean]>([
      ['no token', undefined, false],
      ['the wrong token', 'open', false],
      ['the shared token', 'sesame', true],
    ])('a caller with %s (%s) is served: %s', async (_n, token, served) => {
      const client = new ChunkPeerClient({ timeoutMs: 10_000, ...(token ? { token } : {}) });
      try {
        const got = [];
        for await (const c of client.fetch(guarded.address, keys, 0, 4, 4 * segBytes)) got.push(c.payload !== undefined);
        expect(got).toEqual([served, served, served]);
      } finally {
        client.close();
      }
    });
  });
});
