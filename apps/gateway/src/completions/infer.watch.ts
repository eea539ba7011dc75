import { ErrorCode, MnemoError, planContinuation, type ContinuationPlan } from '@mnemo/kv-core';
import type { FieldLogger } from '@mnemo/service-kit';
import type { NodeDown, TokenEvent } from '@mnemo/proto';
import type { NodeClient } from '../nats/node.client.js';
import type { NodeDownListener } from '../nats/node-down.listener.js';
import type { Placement, SchedulerClient, TokenInbox } from '../nats/scheduler.client.js';
import { AttemptGate, same, type Attempt } from './attempt.gate.js';
import { EventQueue } from './event.queue.js';
import type { BufferGauge, FailoverMetrics, InferTimer } from './infer.metrics.js';
import { StreamBackpressure } from './stream.backpressure.js';
import { StreamSplice } from './stream.splice.js';

export type Continuation = Extract<ContinuationPlan, { kind: 'continue' }>;

/** What a watch needs to move its request to another node when the one running it goes down. */
export interface FailoverDeps {
  readonly downs: Pick<NodeDownListener, 'watch'>;
  /** Schedules the continuation (prompt + streamed tokens, draw offset); dispatch attempts number on from `lastAttempt`. */
  readonly redispatch: (plan: Continuation, lastAttempt: number) => Promise<Placement>;
  /** The request's prompt and completion budget as first scheduled. */
  readonly prompt: readonly number[];
  readonly maxTokens: number;
  /** GATEWAY_FAILOVER_RETRIES. */
  readonly maxFailovers: number;
  readonly metrics: FailoverMetrics;
}

export interface WatchLimits {
  /** Longest silence from the node (not paused) before the request fails as a timeout. */
  readonly idleTimeoutMs: number;
  /** Longest time the client may leave the node paused before the request is given up. */
  readonly stallTimeoutMs: number;
  /** Events buffered for a slow client at most (the node is paused at half of it). */
  readonly bufferEvents: number;
}

/**
 * Everything one in-flight request holds outside its own stack: the token inbox, the gate
 * that picks the attempt to stream, the bounded event buffer and its backpressure, the
 * whole-request, idle and stall timers, the client's abort signal, and the placement.
 * `release` frees all of it exactly once and, given a reason, cancels the request on its
 * node — the one place a client disconnect or a timeout turns into a CancelRequest.
 *
 * Failover: while placed, the watch listens for its node's death (NODE_DOWN). Then it cancels
 * that attempt silently (it may be a false alarm), reopens the gate, and has the request
 * re-dispatched with the tokens already streamed appended to its prompt and its sampler's draw
 * offset (kv-core `planContinuation`); `StreamSplice` numbers the continuation's events on and
 * reports usage as one request. Events of the lost attempt that still arrive are dropped, so the
 * client sees every token exactly once. The idle timer does not run while the request moves; the
 * whole-request deadline does.
 */
export class InferWatch {
  readonly queue: EventQueue<TokenEvent>;
  readonly inbox: TokenInbox;
  private readonly gate: AttemptGate;
  private readonly valve: StreamBackpressure;
  private placement?: Placement;
  /** An attempt paused before the scheduler's reply named it (its early events filled half the buffer). */
  private pausedEarly?: Attempt;
  private deadlineTimer?: NodeJS.Timeout;
  private idleTimer?: NodeJS.Timeout;
  private stallTimer?: NodeJS.Timeout;
  private released = false;
  /** Events of this request counted in the buffer gauge. */
  private counted = 0;
  private readonly stall = new AbortController();
  private readonly splice: StreamSplice;
  private unwatchDown?: () => void;
  /** Between a node-down and the continuation's placement. */
  private moving = false;
  /** When the client last got an event (or the request started): where a failover gap begins. */
  private lastEventAt = performance.now();
  /** Set by a failover, cleared by the continuation's first event (which observes the gap). */
  private gapFrom?: number;
  /** When the pending placement was asked for: a death of its node announced since then is its own. */
  private askedAt = performance.now();
  private readonly onAbort = () => {
    this.queue.fail(new MnemoError(ErrorCode.Cancelled, 'the client closed the request'));
    this.timer.end(ErrorCode.Cancelled);
    this.release('client_disconnected');
  };

  constructor(
    scheduler: Pick<SchedulerClient, 'openInbox'>,
    private readonly nodes: Pick<NodeClient, 'cancel' | 'flow'>,
    private readonly log: FieldLogger,
    private readonly timer: InferTimer,
    private readonly requestId: string,
    private readonly signal: AbortSignal,
    private readonly limits: WatchLimits,
    private readonly gauge: BufferGauge = { inc: () => undefined, dec: () => undefined },
    private readonly failover?: FailoverDeps,
  ) {
    this.splice = new StreamSplice(failover?.prompt.length ?? 0);
    this.queue = new EventQueue<TokenEvent>((remaining) => this.afterTake(remaining));
    this.gate = new AttemptGate(limits.bufferEvents);
    this.valve = new StreamBackpressure(limits.bufferEvents);
    this.inbox = scheduler.openInbox(
      (e) => this.onEvent(e),
      (e) => this.queue.fail(new MnemoError(ErrorCode.Internal, `unreadable token event: ${String(e)}`)),
    );
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Aborts when the client left the node paused past its stall timeout: cut its connection. */
  get stalled(): AbortSignal {
    return this.stall.signal;
  }

  /** Called once the scheduler placed the request: from now on only that attempt streams, and a give-up must reach its node. */
  admitted(placement: Placement, deadlineUnixMs: number): void {
    if (!this.released) {
      const ms = Math.max(0, deadlineUnixMs - Date.now());
      this.deadlineTimer = setTimeout(() => this.giveUp(`the request took longer than its timeout`, 'timeout'), ms);
    }
    this.bind(placement);
  }

  /** A placement (the first or a continuation's): stream its attempt and watch its node. */
  private bind(placement: Placement): void {
    this.placement = placement;
    if (this.released) {
      // The client left while we were scheduling.
      this.nodes.cancel(this.ref(placement), 'client_disconnected');
      return;
    }
    const { deliver, strays } = this.gate.bind(placement);
    for (const s of strays) this.cancelStray(s);
    if (this.failover)
      this.unwatchDown = this.failover.downs.watch(
        { nodeId: placement.nodeId, bootId: placement.bootId ?? '' },
        (d) => this.nodeDown(d),
        this.askedAt,
      );
    if (this.pausedEarly && same(this.pausedEarly, placement)) {
      // Already paused: the consumer resumes it once it has drained the held events.
      this.valve.paused = true;
      this.armStall();
    } else {
      this.armIdle();
    }
    for (const e of deliver) this.deliver(e);
  }

  release(cancelReason?: string): void {
    if (this.released) return;
    this.released = true;
    this.unwatchDown?.();
    this.inbox.close();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.idleTimer);
    clearTimeout(this.stallTimer);
    this.gauge.dec(this.counted);
    this.counted = 0;
    this.signal.removeEventListener('abort', this.onAbort);
    if (cancelReason !== undefined && this.placement !== undefined) {
      this.nodes.cancel(this.ref(this.placement), cancelReason);
      this.log.info('request cancelled on node', { nodeId: this.placement.nodeId, attempt: this.placement.attempt, reason: cancelReason });
    }
  }

  private onEvent(e: TokenEvent): void {
    if (this.released) return;
    const d = this.gate.offer(e);
    switch (d.kind) {
      case 'deliver':
        this.deliver(d.event);
        return;
      case 'held':
        if (d.cancel) this.cancelStray(d.cancel);
        // The attempt that may become the placement is flow-controlled like a placed one.
        if (d.held >= this.valve.high && !this.pausedEarly) {
          this.pausedEarly = d.from;
          this.nodes.flow(this.ref(d.from), true);
        }
        return;
      case 'stray':
        if (d.cancel) this.cancelStray(d.cancel);
        return;
      case 'overflow':
        this.queue.fail(
          new MnemoError(ErrorCode.Internal, `more than ${this.limits.bufferEvents} token events arrived before the scheduler's reply`),
        );
        if (this.pausedEarly) this.nodes.cancel(this.ref(this.pausedEarly), 'gateway_error', true);
        this.release();
        return;
    }
  }

  /**
   * An event of the placed attempt, numbered into the client's stream. A repeat is dropped. Past
   * a gap (events lost while NATS restarted) the attempt cannot go on without a hole in the text:
   * with failover the request continues from what was streamed, as after a node-down; without,
   * the event goes on and InferRun ends the stream with data_loss.
   */
  private deliver(e: TokenEvent): void {
    // Held events of an attempt that just moved (a gap among them) belong to the lost attempt.
    if (this.released || this.moving) return;
    const order = this.splice.order(e);
    if (order === 'repeat') return;
    if (order === 'gap' && this.failover && this.placement) {
      this.move(this.placement, 'gap');
      return;
    }
    this.push(this.splice.map(e));
  }

  private push(e: TokenEvent): void {
    if (!this.valve.paused) this.armIdle();
    const now = performance.now();
    if (this.gapFrom !== undefined) {
      this.failover?.metrics.gap((now - this.gapFrom) / 1000);
      this.gapFrom = undefined;
    }
    this.lastEventAt = now;
    this.counted++;
    this.gauge.inc();
    this.queue.push(e);
    switch (this.valve.afterPush(this.queue.size)) {
      case 'pause':
        this.nodes.flow(this.ref(this.placement!), true);
        this.armStall();
        this.log.debug('client slow: node paused', { buffered: this.queue.size });
        return;
      case 'overflow':
        this.stalledOut(`more than ${this.limits.bufferEvents} token events buffered for a client that does not read`);
        return;
      default:
        return;
    }
  }

  private afterTake(remaining: number): void {
    if (this.counted > 0) {
      this.counted--;
      this.gauge.dec();
    }
    if (this.released || this.valve.afterTake(remaining) !== 'resume') return;
    clearTimeout(this.stallTimer);
    this.nodes.flow(this.ref(this.placement!), false);
    this.armIdle();
  }

  /**
   * The placed attempt's node went down: move the request (see the class comment). Nothing to do
   * once released, while already moving, or for an announcement of a node it has left.
   */
  private nodeDown(down: NodeDown): void {
    const lost = this.placement;
    if (this.released || this.moving || !lost || !this.failover || lost.nodeId !== down.nodeId) return;
    this.unwatchDown = undefined;
    this.move(lost, down.reason);
  }

  /**
   * Moves the request off its placed attempt: its node went down (`reason` from NODE_DOWN), or
   * events of the attempt were lost in transit (`gap`; the node may be fine, the attempt is
   * cancelled all the same). The continuation resumes from the tokens streamed so far.
   */
  private move(lost: Placement, reason: string): void {
    const f = this.failover!;
    // A gap leaves the node watched: stop listening for a death that no longer concerns us.
    this.unwatchDown?.();
    this.unwatchDown = undefined;
    // A false alarm leaves the attempt running: it must neither stream on nor keep the node busy.
    this.nodes.cancel(this.ref(lost), 'failover', true);
    this.gate.reopen(lost);
    clearTimeout(this.idleTimer);
    clearTimeout(this.stallTimer);
    // The continuation starts unpaused on its node; the buffer's level pauses it again if need be.
    this.valve.paused = false;
    this.pausedEarly = undefined;
    const plan = planContinuation(
      { prompt: f.prompt, streamed: this.splice.streamed, maxTokens: f.maxTokens, failovers: this.splice.failovers },
      f.maxFailovers,
    );
    const context = {
      nodeId: lost.nodeId,
      attempt: lost.attempt,
      reason,
      streamed: this.splice.streamed.length,
      failovers: this.splice.failovers,
    };
    const what = reason === 'gap' ? 'token events lost in transit' : 'node down';
    switch (plan.kind) {
      case 'exhausted':
        f.metrics.counted('exhausted');
        this.log.warn(`${what}: no failover left`, context);
        this.queue.fail(
          reason === 'gap'
            ? new MnemoError(
                ErrorCode.DataLoss,
                `token events of this request were lost in transit and it already ` +
                  `moved ${plan.failovers} time(s), the limit (GATEWAY_FAILOVER_RETRIES)`,
              )
            : new MnemoError(
                ErrorCode.NoNodeAvailable,
                `node ${lost.nodeId} went down and this request already moved ` +
                  `${plan.failovers} time(s), the limit (GATEWAY_FAILOVER_RETRIES)`,
              ),
        );
        this.release();
        return;
      case 'complete':
        f.metrics.counted('completed');
        this.push(this.splice.lengthDone(this.requestId));
        return;
      case 'continue':
        break;
    }
    f.metrics.counted('continued');
    this.log.warn(`${what}: request continues on another node`, context);
    this.moving = true;
    this.splice.continued();
    this.gapFrom = this.lastEventAt;
    this.askedAt = performance.now();
    f.redispatch(plan, lost.attempt).then(
      (placement) => {
        this.moving = false;
        this.bind(placement);
      },
      (e: unknown) => {
        this.moving = false;
        f.metrics.counted('failed');
        this.queue.fail(e);
        this.release();
      },
    );
  }

  /** An attempt the scheduler did not place (it admitted after a dispatch timeout): end it without a word to the inbox. */
  private cancelStray(s: Attempt): void {
    this.nodes.cancel(this.ref(s), 'superseded', true);
    this.log.warn('stray attempt cancelled', { nodeId: s.nodeId, attempt: s.attempt, placed: this.placement });
  }

  /** The node is silent on purpose while paused; the client has stallTimeoutMs to catch up. */
  private armStall(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(
      () => this.stalledOut(`the client did not read its stream for ${this.limits.stallTimeoutMs} ms`),
      this.limits.stallTimeoutMs,
    );
  }

  /** Dead node or lost inbox: fail after GATEWAY_IDLE_TIMEOUT_MS without an event. */
  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(
      () => this.giveUp(`no token from the node for ${this.limits.idleTimeoutMs} ms`, 'timeout'),
      this.limits.idleTimeoutMs,
    );
  }

  private giveUp(message: string, cancelReason: string): void {
    this.queue.fail(new MnemoError(ErrorCode.Timeout, message));
    this.release(cancelReason);
  }

  private stalledOut(message: string): void {
    this.log.warn('client stalled: request given up', { message });
    this.giveUp(message, 'client_stalled');
    this.stall.abort();
  }

  private ref(a: Attempt): { nodeId: string; requestId: string; attempt: number } {
    return { nodeId: a.nodeId, requestId: this.requestId, attempt: a.attempt };
  }
}
