import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { IncrementalDetokenizer, type Tokenizer } from '@mnemo/engine';
import { FinishReason, type KvReuse, type TokenEvent } from '@mnemo/proto';
import { fromReply } from '../nats/nats.request.js';
import type { EventQueue } from './event.queue.js';
import type { InferTimer } from './infer.metrics.js';
import { outcomeOf } from './infer.metrics.js';
import { StopStringMatcher } from './stop-string.matcher.js';

export type FinishReasonName = 'stop' | 'length';

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens: number;
  /** Prompt tokens whose KV the node did not compute, from any tier or peer (0 when it found none). */
  readonly cachedTokens: number;
  /** The cross-model (DroidSpeak) plan the node's prefill ran; absent for an ordinary prefill. */
  readonly kvReuse?: KvReuseUsage;
}

export interface KvReuseUsage {
  readonly baseModel: string;
  readonly pattern: { readonly r1: number; readonly u1: number; readonly r2: number };
  readonly recomputedLayers: readonly number[];
  readonly reusedTokens: number;
}

/** What a client sees of a generation: text pieces, then one end. */
export type InferEvent =
  | { readonly kind: 'delta'; readonly text: string; readonly tokenIds: readonly number[] }
  | { readonly kind: 'end'; readonly finishReason: FinishReasonName; readonly usage: Usage };

export interface RunDeps {
  readonly queue: EventQueue<TokenEvent>;
  readonly tokenizer: Tokenizer;
  readonly timer: InferTimer;
  readonly stop: readonly string[];
  /** Releases the inbox, timers and listeners; with a reason, also cancels the request on the node. */
  readonly release: (cancelReason?: string) => void;
  /** Aborts when the client stalled past the gateway's limit: the transport cuts its connection. */
  readonly stalled: AbortSignal;
}

/**
 * A scheduled inference: turns the node's TokenEvents into text deltas (incremental
 * detokenization, stop strings) and ends in exactly one way — a finish, or an error thrown
 * from the iterator (node error, timeout, cancellation). Leaving the loop early cancels
 * the request on the node.
 */
export class InferRun {
  constructor(
    readonly requestId: string,
    readonly model: string,
    /** Unix seconds, the OpenAI `created`. */
    readonly created: number,
    readonly promptTokens: number,
    private readonly deps: RunDeps,
  ) {}

  /** Aborts when the client left its stream unread past GATEWAY_STALL_TIMEOUT_MS; the request is over. */
  get stalled(): AbortSignal {
    return this.deps.stalled;
  }

  async *events(): AsyncGenerator<InferEvent> {
    const { queue, tokenizer, timer, release } = this.deps;
    const detok = new IncrementalDetokenizer(tokenizer);
    const stops = new StopStringMatcher(this.deps.stop);
    let nextSeq = 0;
    let completion = 0;
    // The node reports cached prompt tokens on its first event and again at the end.
    let cachedTokens = 0;
    let kvReuse: KvReuseUsage | undefined;
    let finished = false;
    let nodeDone = false;
    try {
      for (;;) {
        const ev = await queue.next();
        if (ev.seq < nextSeq) continue; // a duplicate: NATS delivers in order, so only a redelivery can be older
        // A gap: events the node published while NATS was interrupted were dropped (core NATS is
        // at most once). Going on would hand the client a text with a hole in it, as a success.
        if (ev.seq > nextSeq)
          throw new MnemoError(
            ErrorCode.DataLoss,
            `${ev.seq - nextSeq} token event(s) of this request were lost in transit ` +
              `(the message bus was interrupted); the stream stops rather than skip tokens`,
          );
        nextSeq = ev.seq + 1;
        nodeDone = ev.done;
        if (ev.usage) cachedTokens = ev.usage.cachedTokens;
        if (ev.usage?.kvReuse) kvReuse = kvReuseOf(ev.usage.kvReuse);
        timer.tokensArrived(ev.tokens.length);
        completion += ev.tokens.length;
        let text = '';
        for (const t of ev.tokens) if (t !== tokenizer.eosTokenId) text += detok.push(t);
        if (ev.done) text += detok.flush();
        const matched = stops.push(text);
        if (matched.stopped) {
          if (matched.text) yield { kind: 'delta', text: matched.text, tokenIds: ev.tokens };
          finished = true;
          // The node would keep generating past our stop string: stop it.
          release(ev.done ? undefined : 'stop_sequence');
          timer.end('ok');
          yield {
            kind: 'end',
            finishReason: 'stop',
            usage: { promptTokens: this.promptTokens, completionTokens: completion, cachedTokens, ...(kvReuse ? { kvReuse } : {}) },
          };
          return;
        }
        if (ev.done) {
          const tail = stops.flush();
          if (matched.text || tail || ev.tokens.length > 0) yield { kind: 'delta', text: matched.text + tail, tokenIds: ev.tokens };
          finished = true;
          release();
          const reason = finishOf(ev);
          timer.end('ok');
          yield {
            kind: 'end',
            finishReason: reason,
            usage: {
              promptTokens: ev.usage?.promptTokens || this.promptTokens,
              completionTokens: ev.usage?.completionTokens || completion,
              cachedTokens,
              ...(kvReuse ? { kvReuse } : {}),
            },
          };
          return;
        }
        if (matched.text || ev.tokens.length > 0) yield { kind: 'delta', text: matched.text, tokenIds: ev.tokens };
      }
    } catch (e) {
      finished = true;
      timer.end(outcomeOf(e));
      release(nodeDone ? undefined : cancelReasonOf(e));
      throw e;
    } finally {
      if (!finished) {
        // The consumer stopped reading (client gone): the node must stop too.
        timer.end(ErrorCode.Cancelled);
        release('client_disconnected');
      }
    }
  }
}

/** A done event's finish reason; errors are thrown so transports map them like any other. */
function finishOf(ev: TokenEvent): FinishReasonName {
  switch (ev.finishReason) {
    case FinishReason.STOP:
    case FinishReason.UNSPECIFIED:
      return 'stop';
    case FinishReason.LENGTH:
      return 'length';
    case FinishReason.CANCELLED:
      throw ev.error?.code ? fromReply(ev.error) : new MnemoError(ErrorCode.Cancelled, 'the request was cancelled on the node');
    case FinishReason.ERROR:
      throw ev.error?.code ? fromReply(ev.error) : new MnemoError(ErrorCode.Internal, 'the node failed the request');
    default:
      throw new MnemoError(ErrorCode.Internal, `unknown finish reason ${String(ev.finishReason)}`);
  }
}

/** Errors that come from the node itself need no cancel; the gateway's own give-ups do. */
function cancelReasonOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown })?.code;
  if (code === ErrorCode.Timeout) return 'timeout';
  if (code === ErrorCode.Cancelled) return 'client_disconnected';
  return 'gateway_error';
}

function kvReuseOf(k: KvReuse): KvReuseUsage {
  return {
    baseModel: k.baseModel,
    pattern: { r1: k.r1, u1: k.u1, r2: k.r2 },
    recomputedLayers: [...k.recomputedLayers],
    reusedTokens: k.reusedTokens,
  };
}
