import { CHUNK_TOKENS, ErrorCode, layerPieces, MnemoError, segmentElems, type KvRowGeometry, type PeerFailure } from '@mnemo/kv-core';
import type { KvRestorePlan, RestoreSources } from '@mnemo/engine';
import type { ChunkPayload } from '../kv-store/tier.writer.js';
import type { ChunkPeerClient } from './chunk-peer.client.js';

/** Layer streams a restore keeps open at once. */
const LAYERS_IN_FLIGHT = 3;

/** What a finished peer restore hands back: the chunks to keep locally, or the failure. */
export interface PeerRestoreOutcome {
  readonly ok: boolean;
  /** Whole chunks received (every layer verified), for the local host pool. */
  readonly chunks: readonly ChunkPayload[];
  readonly blockedMs: number;
  /** Why it failed, when a layer's fetch did (a failed pass may also fail for reasons of its own). */
  readonly failure?: PeerFailure;
}

/**
 * Restores prompt positions [from, until) from another node, layer by layer, while the engine
 * computes: one FetchChunks stream per layer, a few at a time in layer order from when the plan is made,
 * so layer l is usually on its way or here when the pass reaches it (the engine starts load(l)
 * while layer l-1 runs). Any miss — not held, corrupt, truncated, peer gone — rejects that
 * layer's load with DataLoss: the prefill fails, nothing of it is kept, and the request runs
 * again without this peer (recomputing), never on wrong KV.
 */
export class PeerRestorePlan implements KvRestorePlan {
  private readonly layers: Array<Promise<Float32Array[]>>;
  private readonly segs: Float32Array[][] = [];
  /** Set once the plan is done or a layer failed: no further layer stream starts. */
  private stopped = false;
  private failure: PeerFailure | undefined;
  readonly sources: () => RestoreSources;

  constructor(
    private readonly client: ChunkPeerClient,
    private readonly address: string,
    private readonly g: KvRowGeometry,
    /** The prompt's chunks covering [from, until), the first being chunk `first`. */
    private readonly keys: readonly string[],
    private readonly first: number,
    readonly from: number,
    readonly until: number,
    private readonly onDone: (o: PeerRestoreOutcome) => void,
  ) {
    this.layers = [];
    this.sources = () => ({ host: 0, ssd: 0, peer: until - from, peerAddress: address });
    for (let l = 0; l < g.layers; l++) {
      // A window of LAYERS_IN_FLIGHT streams, started in layer order: layer l starts once layer
      // l - LAYERS_IN_FLIGHT is in, so lower layers (needed first) never queue behind higher ones,
      // while a few round trips overlap. A failed layer fails the restore, so the layers after it
      // never start: a hung peer would otherwise be asked again, one deadline per window, long
      // after the request moved on to recomputing.
      const gate = l < LAYERS_IN_FLIGHT ? Promise.resolve() : this.layers[l - LAYERS_IN_FLIGHT]!;
      const p = gate.then(() => this.fetchLayer(l));
      p.catch(() => undefined);
      this.layers.push(p);
    }
  }

  async load(layer: number): Promise<Float32Array> {
    const segs = await this.layers[layer]!;
    const dst = new Float32Array(2 * (this.until - this.from) * this.g.rowElems);
    const base = layer * segmentElems(this.g);
    for (const p of layerPieces(this.g, layer, this.from, this.until)) {
      const seg = segs[p.chunk - this.first]!;
      dst.set(seg.subarray(p.src - base, p.src - base + p.len), p.dst);
    }
    return dst;
  }

  done(ok: boolean, blockedMs = 0): void {
    this.stopped = true;
    const chunks: ChunkPayload[] = [];
    if (ok) {
      const se = segmentElems(this.g);
      this.keys.forEach((key, i) => {
        const payload = new Float32Array(this.g.layers * se);
        for (let l = 0; l < this.g.layers; l++) payload.set(this.segs[l]![i]!, l * se);
        chunks.push({ key, position: this.first + i, payload });
      });
    }
    this.onDone({ ok, chunks, blockedMs, ...(!ok && this.failure ? { failure: this.failure } : {}) });
  }

  private async fetchLayer(layer: number): Promise<Float32Array[]> {
    if (this.stopped) throw new MnemoError(ErrorCode.DataLoss, `peer restore from ${this.address} ended before layer ${layer}`);
    const out: Float32Array[] = [];
    for await (const c of this.client.fetch(this.address, this.keys, layer, layer + 1, segmentElems(this.g) * 4)) {
      if (!c.payload) {
        this.stopped = true;
        this.failure ??= c.stale ? { kind: 'stale', key: c.key } : { kind: 'unreachable' };
        throw new MnemoError(
          ErrorCode.DataLoss,
          `peer ${this.address} could not give chunk ${c.key} layer ${layer} (the request recomputes)`,
        );
      }
      out.push(c.payload);
    }
    this.segs[layer] = out;
    return out;
  }
}

/** Chunks a restore of [from, until) reads, counted from `first`. */
export function chunksFor(from: number, until: number): { first: number; count: number } {
  const first = Math.floor(from / CHUNK_TOKENS);
  return { first, count: Math.ceil(until / CHUNK_TOKENS) - first };
}
