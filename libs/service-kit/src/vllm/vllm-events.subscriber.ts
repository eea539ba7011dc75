import type { Dealer, Subscriber } from 'zeromq';
import { decodeVllmEventBatch, type VllmEventBatch } from './vllm-events.codec.js';
import { seqFrame } from './vllm-events.publisher.js';
import { loadZmq } from './zmq.loader.js';

export interface VllmSubscriberOptions {
  readonly endpoint: string;
  readonly replayEndpoint?: string;
  /** Topic prefix to subscribe to ("" = every message). */
  readonly topic?: string;
  readonly onBatch: (batch: VllmEventBatch, seq: bigint) => void;
  /** A message that was not a vLLM batch, or a transport error. */
  readonly onError: (e: unknown) => void;
  /** The engine restarted (its sequence went back): what it reported before is stale. */
  readonly onRestart?: () => void;
  /** Longest wait for a replay to finish. */
  readonly replayTimeoutMs?: number;
}

/**
 * Consumes one engine's vLLM-format KV events (ZMQ SUB, three frames: topic, sequence, msgpack
 * batch). A gap in the sequence asks the engine's replay socket (when known) for what was
 * missed, as vLLM's own subscriber example does, before the new batch is applied; replies of
 * either framing (`[seq, payload]` or `[topic, seq, payload]` after the delimiter) are accepted.
 */
export class VllmEventsSubscriber {
  private last = -1n;
  private closed = false;
  received = 0;
  replayed = 0;

  private constructor(
    private readonly sub: Subscriber,
    private readonly dealer: Dealer | undefined,
    private readonly o: VllmSubscriberOptions,
  ) {}

  static async connect(o: VllmSubscriberOptions): Promise<VllmEventsSubscriber> {
    const zmq = await loadZmq('Consuming vLLM-format KV events');
    const sub = new zmq.Subscriber({ linger: 0 });
    sub.connect(o.endpoint);
    sub.subscribe(o.topic ?? '');
    const dealer = o.replayEndpoint ? new zmq.Dealer({ linger: 0, receiveTimeout: o.replayTimeoutMs ?? 5000 }) : undefined;
    dealer?.connect(o.replayEndpoint!);
    const s = new VllmEventsSubscriber(sub, dealer, o);
    void s.run();
    return s;
  }

  close(): void {
    this.closed = true;
    this.sub.close();
    this.dealer?.close();
  }

  private async run(): Promise<void> {
    try {
      for await (const frames of this.sub) {
        if (frames.length !== 3) {
          this.o.onError(new Error(`a KV event message has 3 frames, got ${frames.length}`));
          continue;
        }
        const seq = frames[1]!.length === 8 ? frames[1]!.readBigInt64BE() : -1n;
        if (this.last >= 0n && seq <= this.last) {
          this.last = -1n;
          this.o.onRestart?.();
        }
        if (this.last >= 0n && seq > this.last + 1n && this.dealer) await this.replay(this.last + 1n, seq);
        this.apply(frames[2]!, seq);
      }
    } catch (e) {
      if (!this.closed) this.o.onError(e);
    }
  }

  private apply(payload: Buffer, seq: bigint): void {
    if (seq <= this.last) return; // replayed already
    let batch: VllmEventBatch;
    try {
      batch = decodeVllmEventBatch(payload);
    } catch (e) {
      this.o.onError(e);
      return;
    }
    this.last = seq;
    this.received++;
    this.o.onBatch(batch, seq);
  }

  /** Batches [from, before) from the replay socket, applied in order. */
  private async replay(from: bigint, before: bigint): Promise<void> {
    try {
      await this.dealer!.send(['', seqFrame(from)]);
      for (;;) {
        const frames = await this.dealer!.receive();
        const body = frames[0]!.length === 0 ? frames.slice(1) : frames;
        const [seqBuf, payload] = body.length >= 3 ? [body[1]!, body[2]!] : [body[0]!, body[1]!];
        const seq = seqBuf.length === 8 ? seqBuf.readBigInt64BE() : -1n;
        if (seq < 0n) return;
        if (seq < before) {
          this.apply(payload, seq);
          this.replayed++;
        }
      }
    } catch (e) {
      this.o.onError(e);
    }
  }
}
