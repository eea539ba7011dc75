import { CHUNK_TOKENS, RestoreReadSchedule, restoreTier, type PinHandle, type PrefixChunk, type SegmentRef } from '@mnemo/kv-core';
import { transferMs, type TransferLink } from '../costs/transfer.port.js';
import type { PassLoad } from './restore-pass.js';
import type { TwinTiers } from './twin-tiers.js';

/** The links a node's restores use. */
export interface RestoreLinks {
  /** SSD → host memory: one call per read group. */
  readonly ssdRead: TransferLink;
  /** Host memory → the engine: one call per layer over every restored chunk. */
  readonly hostLoad: TransferLink;
  /** A peer's layer stream (one FetchChunks per layer, over every chunk fetched). */
  readonly peer: TransferLink;
}

/** The node's SSD: reads queue on it one after another. */
export interface SsdQueue {
  busyUntil: number;
}

/**
 * A restore from the node's own tiers in virtual time, as the RestoreReader runs it: every
 * replica pinned when planned (host first, else SSD: kv-core restoreTier); SSD-only segments
 * read into host memory in read groups (kv-core RestoreReadSchedule: slow start, then the
 * read-ahead budget) queued on the node's SSD from when the restore is planned (or warmed);
 * each layer copied out of host memory in one call, the next one copied ahead. At the end the
 * pins go and what was read from SSD is promoted into the host pool where it has room.
 */
export class TierRestore implements PassLoad {
  private readonly readDone: number[] = [];
  private readonly ssdSegs: SegmentRef[][] = [];
  private readonly pins: PinHandle[] = [];
  private readonly layers: number;
  private readonly schedule: RestoreReadSchedule;
  private prevCall = 0;
  private lastCopyEnd = 0;
  /** Whether the restore read any SSD segment (only those are worth warming). */
  readonly readsSsd: boolean;
  /** Tokens by the tier their chunk came from: host when every layer was in host memory. */
  readonly tokensByTier = { mem: 0, ssd: 0 };
  released = false;

  constructor(
    private readonly tiers: TwinTiers,
    private readonly links: RestoreLinks,
    ssd: SsdQueue,
    readonly chunks: readonly PrefixChunk[],
    readonly from: number,
    readonly until: number,
    /** When the reads start: the plan, or the warm start while the request waited. */
    readsAt: number,
  ) {
    this.layers = tiers.o.layers;
    this.schedule = new RestoreReadSchedule(this.layers, chunks.length * tiers.stride);
    for (let l = 0; l < this.layers; l++) this.ssdSegs.push([]);
    chunks.forEach((c) => {
      let allHost = true;
      for (let l = 0; l < this.layers; l++) {
        const tier = restoreTier(c, l);
        const pin = tiers.table.pin(c.chunkKey, l, tier);
        if (pin) this.pins.push(pin);
        if (tier === 'ssd') {
          allHost = false;
          this.ssdSegs[l]!.push({ chunkKey: c.chunkKey, position: c.position, layer: l });
        }
      }
      const start = Math.max(from, c.position * CHUNK_TOKENS);
      const end = Math.min(until, (c.position + 1) * CHUNK_TOKENS);
      this.tokensByTier[allHost ? 'mem' : 'ssd'] += Math.max(0, end - start);
    });
    this.readsSsd = this.ssdSegs.some((s) => s.length > 0);
    // Read groups in order on the one SSD queue; the first `slowStartGroups` each wait for the one before.
    let t = Math.max(readsAt, ssd.busyUntil);
    const groups = this.schedule.groupOf(this.layers - 1) + 1;
    for (let g = 0; g < groups; g++) {
      const { start, end } = this.schedule.groupRange(g);
      let segs = 0;
      for (let l = start; l < end; l++) segs += this.ssdSegs[l]!.length;
      if (segs > 0) t += transferMs(links.ssdRead, 1, segs * tiers.stride);
      for (let l = start; l < end; l++) this.readDone[l] = segs > 0 ? t : readsAt;
    }
    if (this.readsSsd) ssd.busyUntil = t;
  }

  load(layer: number, at: number): number {
    const bytes = this.chunks.length * this.tiers.o.segBytes;
    const copyMs = transferMs(this.links.hostLoad, 1, bytes);
    // The copy of layer l was started ahead by load(l - 1) (copy depth 1), after the copy before it.
    const started = layer === 0 ? at : this.prevCall;
    const begin = Math.max(started, this.lastCopyEnd, this.readDone[layer] ?? at);
    this.lastCopyEnd = begin + copyMs;
    this.prevCall = at;
    return this.lastCopyEnd;
  }

  /** The pass ended: pins go; SSD reads join the host pool (ok) or are dropped (failed pass). */
  release(ok: boolean): void {
    if (this.released) return;
    this.released = true;
    this.tiers.unpin(this.pins);
    if (ok) this.tiers.promote(this.ssdSegs.flat());
  }
}

/**
 * A restore from a peer in virtual time, as PeerRestorePlan runs it: one stream per layer over
 * every chunk fetched, LAYERS_IN_FLIGHT at a time in layer order from when it is planned. A
 * layer the peer no longer holds fails the pass (the request recomputes).
 */
export class PeerRestore implements PassLoad {
  private readonly done: number[] = [];
  /** The first layer the peer could not serve, or -1. */
  readonly missingLayer: number;
  /** The first key the peer no longer holds at that layer (a stale directory entry), or undefined. */
  readonly missingKey: string | undefined;

  constructor(
    links: RestoreLinks,
    peer: TwinTiers,
    readonly keys: readonly string[],
    readonly from: number,
    readonly until: number,
    layers: number,
    at: number,
  ) {
    let missing = -1;
    let missingKey: string | undefined;
    const bytes = keys.length * peer.o.segBytes;
    for (let l = 0; l < layers; l++) {
      const start = l < LAYERS_IN_FLIGHT ? at : this.done[l - LAYERS_IN_FLIGHT]!;
      let ms = transferMs(links.peer, 1, bytes);
      for (const k of keys) {
        if (peer.table.get(k, l, 'mem')) continue;
        // The peer reads what only its SSD holds first.
        if (peer.table.get(k, l, 'ssd')) ms += transferMs(links.ssdRead, 1, peer.stride);
        else if (missing < 0) [missing, missingKey] = [l, k];
      }
      this.done.push(start + ms);
    }
    this.missingLayer = missing;
    this.missingKey = missingKey;
  }

  load(layer: number, at: number): number {
    return Math.max(at, this.done[layer]!);
  }

  /** When the pass learns of a miss (the missing layer's stream ends). */
  failsAt(): number {
    return this.missingLayer < 0 ? Infinity : this.done[this.missingLayer]!;
  }
}

/** Layer streams a peer restore keeps open at once (PeerRestorePlan's). */
const LAYERS_IN_FLIGHT = 3;
