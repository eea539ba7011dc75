import type { Publisher, Router } from 'zeromq';
import { encodeVllmEventBatch, type VllmEventBatch } from './vllm-events.codec.js';
import { loadZmq } from './zmq.loader.js';

export interface VllmPublisherOptions {
  /** PUB endpoint to bind, e.g. `tcp://*:5557` (vLLM's default); `tcp://127.0.0.1:*` picks a free port. */
  readonly endpoint: string;
  /** ROUTER endpoint for replay requests (vLLM's default `tcp://*:5558`); none = no replay. */
  readonly replayEndpoint?: string;
  /** First frame of every message (vLLM's `topic`, default ""). */
  readonly topic?: string;
  /** Batches kept for replay (vLLM's `buffer_steps`, default 10 000). */
  readonly bufferSteps?: number;
  readonly onError?: (e: unknown) => void;
}

/** The 8-byte big-endian sequence frame; -1 marks the end of a replay. */
export function seqFrame(seq: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(seq);
  return b;
}

/**
 * vLLM's ZMQ KV event publisher, wire for wire: each batch is one PUB message of three frames —
 * topic, 8-byte big-endian sequence number (from 0), msgpack EventBatch — and a ROUTER answers a
 * replay request `[identity, "", start_seq]` with every buffered batch from `start_seq` on as
 * `[identity, "", topic, seq, payload]`, then `[identity, "", "", -1, ""]` (the framing of vLLM's
 * `_service_replay` since the topic frame was added to replies). Sends are queued: a zeromq
 * socket takes one send at a time.
 */
export class VllmEventsPublisher {
  private seq = 0n;
  private readonly buffer: Array<{ seq: bigint; payload: Buffer }> = [];
  private sending: Promise<void> = Promise.resolve();
  private closed = false;
  published = 0;

  private constructor(
    private readonly pub: Publisher,
    private readonly router: Router | undefined,
    private readonly topic: Buffer,
    private readonly bufferSteps: number,
    private readonly onError: (e: unknown) => void,
    /** Bound endpoints (ports resolved). */
    readonly endpoint: string,
    readonly replayEndpoint: string | undefined,
  ) {}

  static async bind(o: VllmPublisherOptions): Promise<VllmEventsPublisher> {
    const zmq = await loadZmq('Publishing vLLM-format KV events');
    const pub = new zmq.Publisher({ sendHighWaterMark: 100_000, linger: 0 });
    let router: Router | undefined;
    try {
      await pub.bind(o.endpoint);
      if (o.replayEndpoint) {
        router = new zmq.Router({ linger: 0 });
        await router.bind(o.replayEndpoint);
      }
    } catch (e) {
      pub.close();
      router?.close();
      throw e;
    }
    const sut = new VllmEventsPublisher(
      pub,
      router,
      Buffer.from(o.topic ?? '', 'utf8'),
      o.bufferSteps ?? 10_000,
      o.onError ?? (() => undefined),
      pub.lastEndpoint!,
      router?.lastEndpoint ?? undefined,
    );
    if (router) void sut.serveReplays(router);
    return sut;
  }

  publish(batch: VllmEventBatch): void {
    if (this.closed) return;
    const seq = this.seq++;
    const payload = Buffer.from(encodeVllmEventBatch(batch));
    this.buffer.push({ seq, payload });
    if (this.buffer.length > this.bufferSteps) this.buffer.shift();
    this.enqueue(() => this.pub.send([this.topic, seqFrame(seq), payload]));
    this.published++;
  }

  /** Resolves once every queued message went to the socket. */
  flushed(): Promise<void> {
    return this.sending;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.sending;
    this.pub.close();
    this.router?.close();
  }

  private enqueue(send: () => Promise<void>): void {
    this.sending = this.sending.then(send).catch((e: unknown) => {
      if (!this.closed) this.onError(e);
    });
  }

  private async serveReplays(router: Router): Promise<void> {
    try {
      for await (const frames of router) {
        if (frames.length !== 3) continue; // vLLM ignores malformed requests too
        const [id, , start] = frames;
        const from = start!.length === 8 ? start!.readBigInt64BE() : -1n;
        const batches = this.buffer.filter((b) => b.seq >= from);
        this.enqueueReplay(router, id!, batches);
      }
    } catch (e) {
      if (!this.closed) this.onError(e);
    }
  }

  private enqueueReplay(router: Router, id: Buffer, batches: Array<{ seq: bigint; payload: Buffer }>): void {
    this.enqueue(async () => {
      for (const b of batches) await router.send([id, '', this.topic, seqFrame(b.seq), b.payload]);
      await router.send([id, '', '', seqFrame(-1n), '']);
    });
  }
}
