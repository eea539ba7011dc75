import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { FieldLogger } from '@mnemo/service-kit';
import type { TokenEvent } from '@mnemo/proto';
import type { NodeClient } from '../nats/node.client.js';
import type { Placement, SchedulerClient, TokenInbox } from '../nats/scheduler.client.js';
import { AttemptGate, same, type Attempt } from './attempt.gate.js';
import { EventQueue } from './event.queue.js';
import type { BufferGauge, InferTimer } from './infer.metrics.js';
import { StreamBackpressure } from './stream.backpressure.js';

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
  ) {
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
    this.placement = placement;
    if (this.released) {
      // The client left while we were scheduling.
      this.nodes.cancel(this.ref(placement), 'client_disconnected');
      return;
    }
    const { deliver, strays } = this.gate.bind(placement);
    for (const s of strays) this.cancelStray(s);
    const ms = Math.max(0, deadlineUnixMs - Date.now());
    this.deadlineTimer = setTimeout(() => this.giveUp(`the request took longer than its timeout`, 'timeout'), ms);
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
        this.queue.fail(new MnemoError(ErrorCode.Internal, `more than ${this.limits.bufferEvents} token events arrived before the scheduler's reply`));
        if (this.pausedEarly) this.nodes.cancel(this.ref(this.pausedEarly), 'gateway_error', true);
        this.release();
        return;
    }
  }

  private deliver(e: TokenEvent): void {
    if (!this.valve.paused) this.armIdle();
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

  /** An attempt the scheduler did not place (it admitted after a dispatch timeout): end it without a word to the inbox. */
  private cancelStray(s: Attempt): void {
    this.nodes.cancel(this.ref(s), 'superseded', true);
    this.log.warn('stray attempt cancelled', { nodeId: s.nodeId, attempt: s.attempt, placed: this.placement });
  }

  /** The node is silent on purpose while paused; the client has stallTimeoutMs to catch up. */
  private armStall(): void {
    clearTimeout(this.idleTimer);
    clearTimeout(this.stallTimer);
    this.stallTimer = setTimeout(() => this.stalledOut(`the client did not read its stream for ${this.limits.stallTimeoutMs} ms`), this.limits.stallTimeoutMs);
  }

  /** Dead node or lost inbox: fail after GATEWAY_IDLE_TIMEOUT_MS without an event. */
  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.giveUp(`no token from the node for ${this.limits.idleTimeoutMs} ms`, 'timeout'), this.limits.idleTimeoutMs);
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
