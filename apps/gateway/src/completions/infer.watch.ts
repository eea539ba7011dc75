import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { FieldLogger } from '@mnemo/service-kit';
import type { TokenEvent } from '@mnemo/proto';
import type { SchedulerClient, TokenInbox } from '../nats/scheduler.client.js';
import { EventQueue } from './event.queue.js';
import type { InferTimer } from './infer.metrics.js';

/**
 * Everything one in-flight request holds outside its own stack: the token inbox, the
 * whole-request and idle timers, the client's abort signal, and the node it runs on.
 * `release` frees all of it exactly once and, given a reason, cancels the request on
 * the node — the one place a client disconnect or a timeout turns into a CancelRequest.
 */
export class InferWatch {
  readonly queue = new EventQueue<TokenEvent>();
  readonly inbox: TokenInbox;
  private nodeId?: string;
  private deadlineTimer?: NodeJS.Timeout;
  private idleTimer?: NodeJS.Timeout;
  private released = false;
  private readonly onAbort = () => {
    this.queue.fail(new MnemoError(ErrorCode.Cancelled, 'the client closed the request'));
    this.timer.end(ErrorCode.Cancelled);
    this.release('client_disconnected');
  };

  constructor(
    private readonly scheduler: SchedulerClient,
    private readonly log: FieldLogger,
    private readonly timer: InferTimer,
    private readonly requestId: string,
    private readonly signal: AbortSignal,
    private readonly idleTimeoutMs: number,
  ) {
    this.inbox = scheduler.openInbox(
      (e) => {
        if (this.idleTimer) this.armIdle();
        this.queue.push(e);
      },
      (e) => this.queue.fail(new MnemoError(ErrorCode.Internal, `unreadable token event: ${String(e)}`)),
    );
    signal.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Called once the scheduler placed the request: from now on a give-up must reach that node. */
  admitted(nodeId: string, deadlineUnixMs: number): void {
    this.nodeId = nodeId;
    if (this.released) {
      // The client left while we were scheduling.
      this.scheduler.cancel(nodeId, this.requestId, 'client_disconnected');
      return;
    }
    const ms = Math.max(0, deadlineUnixMs - Date.now());
    this.deadlineTimer = setTimeout(() => this.giveUp(`the request took longer than its timeout`), ms);
    this.armIdle();
  }

  release(cancelReason?: string): void {
    if (this.released) return;
    this.released = true;
    this.inbox.close();
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.idleTimer);
    this.signal.removeEventListener('abort', this.onAbort);
    if (cancelReason !== undefined && this.nodeId !== undefined) {
      this.scheduler.cancel(this.nodeId, this.requestId, cancelReason);
      this.log.info('request cancelled on node', { nodeId: this.nodeId, reason: cancelReason });
    }
  }

  /** Dead node or lost inbox: fail after GATEWAY_IDLE_TIMEOUT_MS without an event. */
  private armIdle(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.giveUp(`no token from the node for ${this.idleTimeoutMs} ms`), this.idleTimeoutMs);
  }

  private giveUp(message: string): void {
    this.queue.fail(new MnemoError(ErrorCode.Timeout, message));
    this.release('timeout');
  }
}
