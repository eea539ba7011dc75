import { Subscriber } from 'zeromq';
import { decode } from '@msgpack/msgpack';
import type { VllmEventBatch } from './vllm-events.codec.js';
import { VllmEventsPublisher } from './vllm-events.publisher.js';
import { VllmEventsSubscriber } from './vllm-events.subscriber.js';

const stored = (h: bigint): VllmEventBatch => ({
  ts: 1.5,
  events: [
    {
      type: 'BlockStored',
      blockHashes: [h],
      parentBlockHash: null,
      tokenIds: Array(16).fill(1),
      blockSize: 16,
      loraId: null,
      medium: 'GPU',
      loraName: null,
    },
  ],
});
const until = async (cond: () => boolean, what: string, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('vLLM KV events over ZeroMQ (loopback)', () => {
  let pub: VllmEventsPublisher;
  beforeEach(async () => {
    pub = await VllmEventsPublisher.bind({ endpoint: 'tcp://127.0.0.1:*', replayEndpoint: 'tcp://127.0.0.1:*', topic: 'kv-events' });
  });
  afterEach(async () => pub.close());

  it('publishes three frames (topic, 8-byte big-endian sequence from 0, msgpack batch) to a raw SUB socket', async () => {
    const sub = new Subscriber({ linger: 0 });
    sub.connect(pub.endpoint);
    sub.subscribe('kv-events');
    await new Promise((r) => setTimeout(r, 200)); // PUB drops what it sends before a subscription arrives
    pub.publish(stored(9n));
    const frames = await sub.receive();
    sub.close();
    expect(frames).toHaveLength(3);
    expect(frames[0]!.toString()).toBe('kv-events');
    expect(frames[1]!.toString('hex')).toBe('0000000000000000');
    expect((decode(frames[2]!, { useBigInt64: true }) as unknown[])[1]).toEqual([
      expect.objectContaining({ type: 'BlockStored', block_hashes: [9] }),
    ]);
  });

  it('a subscriber that joins late starts at the first live batch: it does not replay history it never saw begin', async () => {
    for (let i = 0; i < 3; i++) pub.publish(stored(BigInt(100 + i)));
    await pub.flushed();
    const got: Array<[bigint, bigint]> = [];
    const errors: unknown[] = [];
    const sub = await VllmEventsSubscriber.connect({
      endpoint: pub.endpoint,
      replayEndpoint: pub.replayEndpoint,
      onBatch: (b, seq) => got.push([seq, (b.events[0] as { blockHashes: bigint[] }).blockHashes[0]!]),
      onError: (e) => errors.push(e),
    });
    try {
      // The first live message shows the gap after seq 0..2 only once we have seen one: send two.
      await new Promise((r) => setTimeout(r, 200));
      pub.publish(stored(103n));
      await until(() => got.length >= 1, 'the first live batch');
      pub.publish(stored(105n)); // seq 4
      pub.publish(stored(106n)); // seq 5
      await until(() => got.length >= 3, 'live batches');
      expect(got.map(([s]) => s)).toEqual([3n, 4n, 5n]);
      expect(errors).toEqual([]);
    } finally {
      sub.close();
    }
  });

  it('fills a gap from the replay buffer before applying the batch that showed it', async () => {
    const got: bigint[] = [];
    const sub = await VllmEventsSubscriber.connect({
      endpoint: pub.endpoint,
      replayEndpoint: pub.replayEndpoint,
      onBatch: (_b, seq) => got.push(seq),
      onError: () => undefined,
    });
    try {
      await new Promise((r) => setTimeout(r, 200));
      pub.publish(stored(1n)); // seq 0, seen
      await until(() => got.length === 1, 'seq 0');
      // Simulate a lost message: seq 1 goes only into the replay buffer (not on the wire).
      (pub as unknown as { buffer: Array<{ seq: bigint; payload: Buffer }>; seq: bigint }).buffer.push({
        seq: 1n,
        payload: Buffer.from((await import('./vllm-events.codec.js')).encodeVllmEventBatch(stored(2n))),
      });
      (pub as unknown as { seq: bigint }).seq = 2n;
      pub.publish(stored(3n)); // seq 2 shows the gap
      await until(() => got.length === 3, 'the replayed batch and the live one');
      expect(got).toEqual([0n, 1n, 2n]);
      expect(sub.replayed).toBe(1);
    } finally {
      sub.close();
    }
  });
});
