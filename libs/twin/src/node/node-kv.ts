import {
  advisoryDueMs,
  chunkBlockKeys,
  choosePeerPrefix,
  CHUNK_TOKENS,
  PeerSourceHealth,
  planPrefetchPulls,
  prefetchExpiry,
  restoreReach,
  restoreTouchKeys,
  SessionTailTracker,
  worthWarming,
  type DeviceChunkEvent,
  type DirectoryChange,
  type RestorePrompt,
} from '@mnemo/kv-core';
import type { EventQueue } from '../core/event.queue.js';
import { transferMs } from '../costs/transfer.port.js';
import type { PassLoad } from './restore-pass.js';
import { PeerRestore, TierRestore, type RestoreLinks, type SsdQueue } from './twin-restores.js';
import type { TwinDevice } from './twin-device.js';
import type { TwinKvSource, TwinSeq } from './twin-seq.js';
import type { TierChange, TwinTiers } from './twin-tiers.js';

/** A change to what this node holds, device tier included (a KvChange of its KV events): what the directory applies. */
export type HoldingChange = DirectoryChange;

/** What a session's request left on the node: whole chunks of prompt and reply, then the partial chunk past them. */
export interface TwinSessionTail {
  readonly tenant: string;
  readonly sessionId: string;
  readonly chunkKeys: readonly string[];
  readonly partialKey: string;
  readonly tokens: number;
}

/** An advisory's prefetch request, as the scheduler sends it. */
export interface TwinPrefetch {
  readonly advisoryId: string;
  readonly sessionId: string;
  readonly chunkKeys: readonly string[];
  readonly sources: readonly TwinKvSource[];
  readonly expiresAtMs: number;
  readonly priority: number;
  readonly expectedArrivalMs: number;
}

/** What the node's KV store needs of the cluster. */
export interface NodeKvNet {
  readonly events: EventQueue;
  /** Another node's tiers (a peer to restore or prefetch from). */
  peerTiers(nodeId: string): TwinTiers | undefined;
  /** The node's batched KV event goes to the scheduler. */
  publish(changes: readonly HoldingChange[], tails: readonly TwinSessionTail[]): void;
}

export interface NodeKvOptions {
  readonly layers: number;
  readonly kvEventsMs: number;
  readonly promote: boolean;
  readonly prefetchTtlMs: number;
  readonly maxAdvisories: number;
  readonly warm: boolean;
  readonly links: RestoreLinks;
  /** CPU the node spends exporting one chunk, ms (charged to the iteration that wrote it). */
  readonly exportMsPerChunk: number;
}

/** How long a warm restore waits for its request's pass (the node's WARM_TTL_MS). */
const WARM_TTL_MS = 5_000;

/**
 * A twin node's KV store behind its device: the device's chunk events exported to the tiers and
 * reported (batched every `kvEventsMs`, with the session tails), restore plans from the tiers or
 * a peer (kv-core restoreReach and choosePeerPrefix, as the node's PeerAwarePromptStore),
 * warm restores, and advisory prefetches (kv-core planPrefetchPulls, PrefetchedChunks, device
 * staging).
 */
export class NodeKv {
  /** CPU spent on exports since the node last charged it. */
  cpuDebtMs = 0;
  readonly counters = {
    restoredTokens: 0,
    hitTokens: { mem: 0, ssd: 0 },
    peerRestoredTokens: 0,
    peerFailures: 0,
    prefetchedChunks: 0,
    exportedChunks: 0,
  };
  readonly ssd: SsdQueue = { busyUntil: 0 };
  private pending: HoldingChange[] = [];
  private tails: TwinSessionTail[] = [];
  private flushDue = false;
  private readonly warmed = new Map<string, { restore: TierRestore; at: number }>();
  /** Sources and keys that failed recently (kv-core PeerSourceHealth, as PeerAwarePromptStore's). */
  private readonly health = new PeerSourceHealth();
  private readonly advisories = new Map<string, number>();
  /** Per sequence: chunks it wrote, and the partial chunk it left (the node's SessionTails). */
  private readonly written = new SessionTailTracker();

  constructor(
    private readonly nodeId: string,
    readonly tiers: TwinTiers | undefined,
    private readonly device: TwinDevice,
    private readonly net: NodeKvNet,
    private readonly o: NodeKvOptions,
  ) {}

  /** The device's chunk events (the ledger's listener). */
  onChunk = (e: DeviceChunkEvent): void => {
    if (e.kind === 'evicted') return this.report({ kind: 'removed', tier: 'device', keys: [e.key] });
    this.written.onChunk(e);
    if (e.kind === 'written') this.report({ kind: 'stored', tier: 'device', keys: [e.key] });
    const t = this.tiers;
    if (!t) return;
    t.dropSuperseded(e.superseded);
    if (t.holds(e.key)) return;
    this.cpuDebtMs += this.o.exportMsPerChunk;
    this.counters.exportedChunks++;
    // Chunks completed by one engine call go to the tiers as one batch (KvStore's flushExports).
    this.exports.push({ key: e.key, position: e.chunk });
  };

  private exports: Array<{ key: string; position: number }> = [];

  /** The engine call that wrote chunks returned: they are written through as one batch. */
  flushWrites(): void {
    if (this.exports.length === 0 || !this.tiers) return;
    const chunks = this.exports;
    this.exports = [];
    this.tiers.write(chunks);
  }

  /** The tiers' changes (their listener). */
  onTierChange = (c: TierChange): void => this.report({ kind: c.kind, tier: c.tier === 'mem' ? 'host' : 'ssd', keys: c.keys });

  /** A request ended here after its release: what its session's next turn will find (SessionTails). */
  ended(seq: TwinSeq): void {
    const r = seq.request;
    const tail = this.written.ended(seq.id, r.chunkKeys);
    if (!r.sessionId) return;
    this.tails.push({ tenant: r.tenant, sessionId: r.sessionId, ...tail });
    this.schedule();
  }

  // ---- restores ------------------------------------------------------------------------------

  /** The prompt as the tiers key it. */
  prompt(seq: TwinSeq): RestorePrompt {
    const r = seq.request;
    return {
      chunkKeys: r.chunkKeys,
      promptTokens: r.tokens.length,
      blockKeys: (c) => {
        if (r.keys) return r.keys.blockKeys(c);
        let keys = seq.blockKeys.get(c);
        if (!keys) seq.blockKeys.set(c, (keys = chunkBlockKeys(r.model, r.tenant, r.tokens, r.chunkKeys, c)));
        return keys;
      },
    };
  }

  /** Planning estimate: where the tiers or a peer could restore this prompt up to. */
  restorableUntil(seq: TwinSeq, deviceTokens: number, now: number): number {
    if (!this.tiers) return deviceTokens;
    const p = this.prompt(seq);
    const local = Math.max(deviceTokens, restoreReach(this.tiers.table, p, deviceTokens).until);
    return this.peerChoice(seq, p, deviceTokens, local, now)?.until ?? local;
  }

  /** The request waits for its pass: SSD reads its restore will need start now. */
  warm(seq: TwinSeq, now: number): void {
    if (!this.tiers || !this.o.warm || this.warmed.has(seq.id) || !this.device.salt(seq)) return;
    const deviceTokens = this.device.cachedTokens(seq);
    const reach = restoreReach(this.tiers.table, this.prompt(seq), deviceTokens);
    if (!worthWarming(reach, deviceTokens)) return;
    const restore = new TierRestore(
      this.tiers,
      this.o.links,
      this.ssd,
      reach.chunks.slice(0, Math.ceil(reach.until / CHUNK_TOKENS) - Math.floor(deviceTokens / CHUNK_TOKENS)),
      deviceTokens,
      reach.until,
      now,
    );
    this.warmed.set(seq.id, { restore, at: now });
    this.net.events.after(WARM_TTL_MS, { fire: () => this.cool(seq.id) });
  }

  cool(id: string): void {
    const w = this.warmed.get(id);
    if (!w) return;
    this.warmed.delete(id);
    w.restore.release(false);
  }

  /** A restore of positions [deviceTokens, …) for the pass starting at `now` (PeerAwarePromptStore.restorePlan), or undefined. */
  restorePlan(seq: TwinSeq, deviceTokens: number, now: number): TierRestore | PeerRestore | undefined {
    const t = this.tiers;
    if (!t) return undefined;
    const p = this.prompt(seq);
    const reach = restoreReach(t.table, p, deviceTokens);
    const local = Math.max(deviceTokens, reach.until);
    const choice = this.peerChoice(seq, p, deviceTokens, local, now);
    if (choice) {
      this.cool(seq.id);
      const source = seq.request.kvSources[choice.source]!;
      const peer = this.net.peerTiers(source.nodeId);
      const first = Math.floor(deviceTokens / CHUNK_TOKENS);
      const count = Math.ceil(choice.until / CHUNK_TOKENS) - first;
      if (peer)
        return Object.assign(
          new PeerRestore(this.o.links, peer, choice.keys.slice(0, count), deviceTokens, choice.until, this.o.layers, now),
          { sourceNode: source.nodeId },
        );
    }
    t.table.touch(restoreTouchKeys(p, reach), now);
    t.prefetched.adopt(p.chunkKeys);
    const w = this.warmed.get(seq.id);
    this.warmed.delete(seq.id);
    if (w && w.restore.from === deviceTokens && w.restore.until === reach.until) return w.restore;
    w?.restore.release(false);
    if (reach.until <= deviceTokens) return undefined;
    const first = Math.floor(deviceTokens / CHUNK_TOKENS);
    return new TierRestore(
      t,
      this.o.links,
      this.ssd,
      reach.chunks.slice(0, Math.ceil(reach.until / CHUNK_TOKENS) - first),
      deviceTokens,
      reach.until,
      now,
    );
  }

  /** A pass with this restore ended (ok or not): counters, pins, and a peer's chunks kept here. */
  restoreDone(r: PassLoad, ok: boolean, now: number): void {
    if (r instanceof TierRestore) {
      r.release(ok);
      if (!ok) return;
      this.counters.restoredTokens += r.until - r.from;
      this.counters.hitTokens.mem += r.tokensByTier.mem;
      this.counters.hitTokens.ssd += r.tokensByTier.ssd;
      return;
    }
    const peer = r as PeerRestore & { sourceNode: string };
    if (!ok) {
      this.counters.peerFailures++;
      // A twin peer always answers: a miss is a key it no longer holds. A restore that missed nothing
      // failed with its pass (another load's miss, or the plan's block estimate), not through its peer:
      // marked unreachable, a healthy peer was left out for FAILED_SOURCE_MS while the scheduler,
      // which cannot see that, kept sending turns there to pull from it; they recomputed instead
      // (in the 1,024-user run, 25K-token turns priced at 1.6 s of fetch took 3.6 s).
      if (peer.missingKey !== undefined) this.health.failed(peer.sourceNode, { kind: 'stale', key: peer.missingKey }, now);
      return;
    }
    this.counters.peerRestoredTokens += r.until - r.from;
    // Whole chunks only, as PeerAwarePromptStore: the pass's own KV supersedes a partial one.
    const first = Math.floor(r.from / CHUNK_TOKENS);
    const whole = peer.keys.map((key, i) => ({ key, position: first + i })).filter((c) => (c.position + 1) * CHUNK_TOKENS <= r.until);
    this.tiers?.write(whole);
  }

  private peerChoice(seq: TwinSeq, p: RestorePrompt, deviceTokens: number, localUntil: number, now: number) {
    const sources = seq.request.kvSources;
    if (sources.length === 0) return null;
    return choosePeerPrefix(
      p.chunkKeys,
      p.promptTokens,
      deviceTokens,
      localUntil,
      sources.map((s) => this.health.offered(s.nodeId, s, now)),
      (i) => this.health.usable(sources[i]!.nodeId, now),
      p.blockKeys,
    );
  }

  // ---- advisories --------------------------------------------------------------------------

  /**
   * An advisory's prefetch (PrefetchUseCase): chunks this node lacks pulled from their holders, into host memory and free device blocks.
   * Returns chunks queued.
   */
  prefetch(a: TwinPrefetch, now: number): number {
    const t = this.tiers;
    const expiresAtMs = prefetchExpiry(a.expiresAtMs, now, this.o.prefetchTtlMs);
    if (!t || expiresAtMs === null) return 0;
    for (const [id, exp] of this.advisories) if (exp <= now) this.advisories.delete(id);
    if (!this.advisories.has(a.advisoryId) && this.advisories.size >= this.o.maxAdvisories) return 0;
    this.advisories.set(a.advisoryId, expiresAtMs);
    const advisory = {
      id: a.advisoryId,
      expiresAtMs,
      receivedMs: now,
      priority: a.priority,
      dueMs: advisoryDueMs({ expectedArrivalMs: a.expectedArrivalMs, ordered: false, receivedMs: now }),
    };
    let queued = 0;
    for (const pull of planPrefetchPulls(a.chunkKeys, a.sources, (k) => t.holdsOnHost(k))) {
      const peer = this.net.peerTiers(a.sources[pull.source]!.nodeId);
      if (!peer) continue;
      queued += pull.chunks.length;
      // One stream of whole chunks, in order: each lands after the ones before it.
      let at = now + this.o.links.peer.dispatchMs;
      for (const c of pull.chunks) {
        const held = peer.holds(c.key);
        at += transferMs({ dispatchMs: 0, bytesPerMs: this.o.links.peer.bytesPerMs }, 0, this.o.layers * t.o.segBytes);
        if (!held) continue;
        this.net.events.at(at, {
          fire: (when) => {
            if (!this.advisories.has(a.advisoryId)) return;
            this.counters.prefetchedChunks++;
            const rank = { priority: advisory.priority, dueMs: advisory.dueMs, stamp: now, position: c.position };
            t.importPrefetched([c], advisory, (key) => this.o.promote && this.device.stage(key, rank), when);
          },
        });
      }
    }
    return queued;
  }

  /** The advisory is withdrawn: its unused prefetches leave host memory and the device. */
  forget(advisoryId: string): void {
    this.advisories.delete(advisoryId);
    const t = this.tiers;
    if (!t) return;
    for (const u of t.withdraw(t.prefetched.forget(advisoryId))) this.device.unstage(u.key);
  }

  housekeeping(now: number): void {
    if (!this.tiers) return;
    for (const u of this.tiers.housekeeping(now)) this.device.unstage(u.key);
  }

  // ---- KV events -----------------------------------------------------------------------------

  private report(c: HoldingChange): void {
    this.pending.push(c);
    this.schedule();
  }

  private schedule(): void {
    if (this.flushDue) return;
    this.flushDue = true;
    this.net.events.after(this.o.kvEventsMs, { fire: () => this.flush() });
  }

  private flush(): void {
    this.flushDue = false;
    if (this.pending.length === 0 && this.tails.length === 0) return;
    const changes = this.pending;
    const tails = this.tails;
    this.pending = [];
    this.tails = [];
    this.net.publish(changes, tails);
  }

  get id(): string {
    return this.nodeId;
  }
}
