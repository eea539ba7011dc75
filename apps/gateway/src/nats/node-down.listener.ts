import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { decodeMessage, NodeDownSchema, Subjects, type NodeDown } from '@mnemo/proto';
import { JsonLogger, NATS_CONNECTION } from '@mnemo/service-kit';

/** A node incarnation's placement: `bootId` "" when its node sends none (then any announcement of the node id matches). */
export interface Incarnation {
  readonly nodeId: string;
  readonly bootId: string;
}

/** Incarnations announced down that a request placed a moment later must still hear of. */
const REMEMBERED = 1024;

/** Whether an announcement is about this incarnation; an empty boot id on either side matches any. */
export function announces(down: Incarnation, placed: Incarnation): boolean {
  return down.nodeId === placed.nodeId && (down.bootId === '' || placed.bootId === '' || down.bootId === placed.bootId);
}

/**
 * The gateway's ear on NODE_DOWN: requests placed on a node register here and are told once when
 * its incarnation is announced down, so they fail over at once instead of waiting out the idle
 * timeout. Announcements repeat (one per scheduler replica): a request hears only the first, as
 * it unregisters on it. The last announced incarnations are remembered, because a placement can
 * reach the gateway after the announcement of its own node's death (the node admitted, then died
 * while the scheduler's reply travelled). Only announcements heard after the placement was asked
 * for count: a node announced down that was only slow beats again under the same boot id and
 * may be placed on anew, which must not read as dead.
 */
@Injectable()
export class NodeDownListener implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly watchers = new Map<string, Set<{ readonly placed: Incarnation; readonly onDown: (d: NodeDown) => void }>>();
  /** Announced incarnations with a boot id (`node/boot` → the announcement and when it was heard), oldest first, at most REMEMBERED. */
  private readonly recent = new Map<string, { readonly down: NodeDown; readonly atMs: number }>();
  private sub?: Subscription;

  constructor(
    @Inject(NATS_CONNECTION) private readonly nc: NatsConnection,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
  ) {}

  onApplicationBootstrap(): void {
    this.sub = this.nc.subscribe(Subjects.NODE_DOWN, {
      callback: (err, msg) => {
        if (err) return;
        let down: NodeDown;
        try {
          down = decodeMessage(NodeDownSchema, msg.data);
        } catch (e) {
          this.logger.emit('warn', 'malformed NODE_DOWN ignored', { err: String(e) });
          return;
        }
        this.announced(down);
      },
    });
  }

  onModuleDestroy(): void {
    this.sub?.unsubscribe();
  }

  /**
   * Calls `onDown` once when `placed` is announced down — at once (asynchronously) when that was
   * heard at or after `sinceMs` (performance.now() when the placement was asked for); returns the
   * unsubscribe.
   */
  watch(placed: Incarnation, onDown: (d: NodeDown) => void, sinceMs = Infinity): () => void {
    const already = placed.bootId === '' ? undefined : this.recent.get(`${placed.nodeId}/${placed.bootId}`);
    if (already && already.atMs >= sinceMs) {
      queueMicrotask(() => onDown(already.down));
      return () => undefined;
    }
    const w = { placed, onDown };
    let set = this.watchers.get(placed.nodeId);
    if (!set) this.watchers.set(placed.nodeId, (set = new Set()));
    set.add(w);
    return () => {
      set.delete(w);
      if (set.size === 0 && this.watchers.get(placed.nodeId) === set) this.watchers.delete(placed.nodeId);
    };
  }

  /** Requests registered now (for tests and metrics). */
  get watching(): number {
    let n = 0;
    for (const s of this.watchers.values()) n += s.size;
    return n;
  }

  /** One announcement: every request on that incarnation hears it once. */
  announced(down: NodeDown): void {
    // Only exact incarnations are remembered: an announcement without a boot id cannot tell a later incarnation from this one.
    if (down.bootId !== '') {
      const key = `${down.nodeId}/${down.bootId}`;
      this.recent.delete(key);
      this.recent.set(key, { down, atMs: performance.now() });
      if (this.recent.size > REMEMBERED) this.recent.delete(this.recent.keys().next().value!);
    }
    const set = this.watchers.get(down.nodeId);
    if (!set) return;
    const hit = [...set].filter((w) => announces(down, w.placed));
    for (const w of hit) set.delete(w);
    if (set.size === 0) this.watchers.delete(down.nodeId);
    if (hit.length > 0)
      this.logger.emit('warn', 'node down: moving its requests', {
        nodeId: down.nodeId,
        bootId: down.bootId,
        reason: down.reason,
        requests: hit.length,
      });
    for (const w of hit) w.onDown(down);
  }
}
