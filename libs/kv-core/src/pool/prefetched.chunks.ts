import { comparePrefetchPurge, mostUrgent, PurgeQueue, type PrefetchUrgency } from './eviction.order.js';

/** The advisory a prefetch is for: its id, when it lapses, and how much its data is wanted. */
export interface PrefetchAdvisory extends Partial<PrefetchUrgency> {
  readonly id: string;
  readonly expiresAtMs: number;
  /**
   * When the node took the advisory: the purge stamp of every chunk it pulls. One stamp for all
   * of them, so under pressure its later chunks go before its earlier ones — stamping each chunk
   * as it arrived would make the head of the prefix the oldest, and purge it first.
   */
  readonly receivedMs?: number;
}

/** One layer of one prefetched chunk in the host pool: the unit cooperative memory drops. */
interface PurgeItem extends PrefetchUrgency {
  readonly model: string;
  readonly key: string;
  readonly layer: number;
  readonly position: number;
  readonly stamp: number;
  readonly bytes: number;
}

interface Prefetched {
  readonly model: string;
  readonly advisories: Set<string>;
  items: PurgeItem[];
  urgency: PrefetchUrgency;
  /** Also staged in the engine's device cache (promoted): unstaged when no advisory wants it. */
  onDevice: boolean;
}

const EMPTY: ReadonlySet<string> = new Set();

/** An advisory that says nothing of its priority or timing. */
const UNKNOWN: PrefetchUrgency = { priority: 0, dueMs: Infinity };

/** A segment to drop from the host pool. */
export interface Drop {
  readonly model: string;
  readonly key: string;
  readonly layer: number;
}

/** One chunk an advisory's import brought, or found here already. */
export interface ImportedChunk {
  readonly key: string;
  readonly position: number;
  /** Pulled in by this import (the host pool held none of it before). */
  readonly fresh: boolean;
  /** Layers the host pool holds of it now (of a fresh chunk: what landed). */
  readonly hostLayers: readonly number[];
  /** Staged on the device by this import. */
  readonly onDevice: boolean;
}

/**
 * What an advisory's import of `chunks` left here, in import order, for
 * {@link PrefetchedChunks.recordImport}: `fresh` chunks (none of them in the host pool before)
 * with the layers the host pool holds now, and those `staged` on the device.
 */
export function importedChunks(
  chunks: ReadonlyArray<{ readonly key: string; readonly position: number }>,
  fresh: ReadonlySet<string>,
  staged: ReadonlySet<string>,
  hostLayers: (key: string) => readonly number[],
): ImportedChunk[] {
  return chunks.map(({ key, position }) => {
    const isFresh = fresh.has(key);
    return { key, position, fresh: isFresh, hostLayers: isFresh ? hostLayers(key) : [], onDevice: staged.has(key) };
  });
}

/** What withdrawn advisories leave behind: host segments to drop, and device-staged chunks to unstage. */
export interface Withdrawal {
  readonly drops: Drop[];
  readonly unstage: Array<{ readonly model: string; readonly key: string }>;
}

/** The chunks a withdrawal touches: those with host segments to drop or a device copy to unstage, each once. */
export const withdrawnChunks = (w: Withdrawal): number => new Set([...w.drops.map((d) => d.key), ...w.unstage.map((u) => u.key)]).size;

/**
 * Chunks an advisory pulled from a peer into the host pool, before any request used them
 * (Symphony §3.4, cooperative memory). They are copies of KV another node keeps, so they are
 * never written to the SSD pool and are dropped without copy-back: first when the host pool
 * needs room (in kv-core's purge order — lowest advisory priority, the request due last, then
 * least recently prefetched, later layers first, later chunks first; a chunk several advisories
 * want counts as wanted by the most urgent), and when every advisory that asked for them is
 * forgotten or expires. A
 * request that uses one adopts it: it becomes ordinary cached KV and leaves this set.
 *
 * A chunk also promoted to the device (staged there) stays known after its host copy is purged,
 * so forgetting its advisory unstages the device copy too.
 */
export class PrefetchedChunks {
  private readonly chunks = new Map<string, Prefetched>();
  private readonly queue = new PurgeQueue<PurgeItem>(comparePrefetchPurge);
  private readonly advisories = new Map<string, { keys: Set<string>; expiresAtMs: number }>();
  purgedSegments = 0;

  get size(): number {
    return this.chunks.size;
  }

  has(key: string): boolean {
    return this.chunks.has(key);
  }

  /** Records a chunk `advisoryId` prefetched; its layers become purge candidates. */
  add(
    advisory: PrefetchAdvisory,
    c: { model: string; key: string; position: number; layers: readonly number[]; bytes: number; stamp: number; onDevice?: boolean },
  ): void {
    this.landedFor(advisory, c.key);
    const urgency: PrefetchUrgency = { priority: advisory.priority ?? UNKNOWN.priority, dueMs: advisory.dueMs ?? UNKNOWN.dueMs };
    const known = this.chunks.get(c.key);
    if (known) {
      known.advisories.add(advisory.id);
      known.onDevice ||= c.onDevice === true;
      const more = mostUrgent(known.urgency, urgency);
      if (more.priority === known.urgency.priority && more.dueMs === known.urgency.dueMs) return;
      // Queued keys must not change in place: requeue the chunk's layers under the new urgency.
      known.urgency = more;
      known.items = this.requeue(known.items, more);
      return;
    }
    const items = c.layers.map((layer) => ({
      model: c.model,
      key: c.key,
      layer,
      position: c.position,
      stamp: c.stamp,
      bytes: c.bytes,
      ...urgency,
    }));
    for (const it of items) this.queue.add(it);
    this.chunks.set(c.key, { model: c.model, advisories: new Set([advisory.id]), items, urgency, onDevice: c.onDevice === true });
  }

  /**
   * Records what an advisory's import left here, and says what it prefetched. A fresh chunk is
   * the advisory's prefetch when any of it landed, in the host pool or staged on the device; a
   * chunk that was here already is no copy this advisory brought: it joins the advisories of a
   * chunk another one prefetched, or else only counts as landed for it. Fresh chunks go first,
   * each group in import order.
   */
  recordImport(
    advisory: PrefetchAdvisory,
    of: { readonly model: string; readonly bytes: number; readonly stamp: number },
    chunks: readonly ImportedChunk[],
  ): { chunks: number; segments: number } {
    const got = { chunks: 0, segments: 0 };
    for (const c of chunks) {
      if (!c.fresh || (c.hostLayers.length === 0 && !c.onDevice)) continue;
      got.chunks++;
      got.segments += c.hostLayers.length;
      this.add(advisory, { ...of, key: c.key, position: c.position, layers: c.hostLayers, onDevice: c.onDevice });
    }
    for (const c of chunks) {
      if (c.fresh) continue;
      if (this.has(c.key)) this.add(advisory, { ...of, key: c.key, position: c.position, layers: [] });
      else this.landedFor(advisory, c.key);
    }
    return got;
  }

  /**
   * A chunk the advisory pulled arrived but the node held it already (its own KV): counted as
   * landed for the advisory, and not a purge candidate (it is not a copy the advisory brought).
   */
  landedFor(advisory: PrefetchAdvisory, key: string): void {
    const a = this.advisories.get(advisory.id) ?? { keys: new Set<string>(), expiresAtMs: advisory.expiresAtMs };
    a.keys.add(key);
    this.advisories.set(advisory.id, a);
  }

  private requeue(items: readonly PurgeItem[], urgency: PrefetchUrgency): PurgeItem[] {
    return items.map((it) => {
      this.queue.remove(it);
      const next = { ...it, ...urgency };
      this.queue.add(next);
      return next;
    });
  }

  /**
   * The chunks an advisory's pulls have landed so far (held now, or adopted or purged since);
   * empty for an advisory forgotten, expired or never seen.
   */
  landed(advisoryId: string): ReadonlySet<string> {
    return this.advisories.get(advisoryId)?.keys ?? EMPTY;
  }

  /** How many of the chunks an advisory's pulls landed are still here: in the host pool (`onHost`) or staged on the device. */
  heldFor(advisoryId: string, onHost: (key: string) => boolean): number {
    let n = 0;
    for (const key of this.landed(advisoryId)) if (onHost(key) || this.onDevice(key)) n++;
    return n;
  }

  /** Whether a prefetched chunk is staged on the device, as far as this set knows (until adopted or withdrawn). */
  onDevice(key: string): boolean {
    return this.chunks.get(key)?.onDevice === true;
  }

  /** A request used these chunks: from now on they are ordinary cached KV. */
  adopt(keys: readonly string[]): void {
    for (const k of keys) this.release(k);
  }

  /** The advisory is withdrawn: what of chunks no other advisory wants is to drop now. */
  forget(advisoryId: string, into: Withdrawal = { drops: [], unstage: [] }): Withdrawal {
    const a = this.advisories.get(advisoryId);
    this.advisories.delete(advisoryId);
    const out = into.drops;
    for (const key of a?.keys ?? []) {
      const p = this.chunks.get(key);
      if (!p) continue;
      p.advisories.delete(advisoryId);
      if (p.advisories.size > 0) continue;
      out.push(...p.items.map((it) => ({ model: it.model, key: it.key, layer: it.layer })));
      if (p.onDevice) into.unstage.push({ model: p.model, key });
      this.release(key);
    }
    return into;
  }

  /** Advisories whose expiry passed, forgotten: what to drop. */
  expire(nowMs: number): Withdrawal {
    const out: Withdrawal = { drops: [], unstage: [] };
    for (const [id, a] of this.advisories) if (a.expiresAtMs <= nowMs) this.forget(id, out);
    return out;
  }

  /** The host pool needs `bytes`: the prefetched segments to drop first, in purge order. */
  purge(bytes: number): Drop[] {
    const taken = this.queue.take(bytes);
    this.purgedSegments += taken.length;
    for (const it of taken) {
      const p = this.chunks.get(it.key);
      if (!p) continue;
      p.items.splice(p.items.indexOf(it), 1);
      if (p.items.length === 0 && !p.onDevice) this.chunks.delete(it.key);
    }
    return taken.map((it) => ({ model: it.model, key: it.key, layer: it.layer }));
  }

  private release(key: string): void {
    const p = this.chunks.get(key);
    if (!p) return;
    for (const it of p.items) this.queue.remove(it);
    this.chunks.delete(key);
  }
}
