import { DeviceBlockManager } from '../blocks/device-block.manager.js';
import { DemandWindow } from './demand.window.js';
import { scaleDown, scaleUp } from './elastic-scaling.policy.js';
import { blockElements, lcm, minimumElasticUnit, type ElasticUnit, type KvShape } from './elastic-unit.math.js';

/** A model sharing the node's device KV budget. */
export interface ElasticModelSpec {
  readonly id: string;
  readonly shape: KvShape;
}

/** A model and the block manager of its own cache, whose capacity at start is its whole region. */
export interface ElasticMember extends ElasticModelSpec {
  readonly blocks: DeviceBlockManager;
  /** Most blocks its cache can grow to (its reserved tensor); unbounded when absent. */
  readonly maxBlocks?: number;
}

/** Per-model figures for metrics, in that model's minimum elastic units towards the current master. */
export interface ElasticModelState {
  readonly id: string;
  readonly role: 'master' | 'worker' | 'idle';
  /** Blocks of its own region the model's requests may use. */
  readonly ownedBlocks: number;
  /** Blocks of its own region lent to the master (invisible to its own requests). */
  readonly lentBlocks: number;
  /** Master blocks it holds in other models' regions. */
  readonly borrowedBlocks: number;
  readonly ownedUnits: number;
  readonly lentUnits: number;
  readonly borrowedUnits: number;
  readonly resizeEvents: number;
}

/** Why a reclaim could not take back all it asked for. */
export type ReclaimResult =
  | { readonly ok: true; readonly workerBlocks: number; readonly masterBlocks: number }
  | { readonly ok: false; readonly reason: 'master_blocks_in_use'; readonly masterBlocks: number };

interface Member {
  readonly spec: ElasticModelSpec;
  readonly blockElems: number;
  /** Physical region of the model in its own blocks (fixed at start): owned + lent. */
  readonly regionBlocks: number;
  /** The model's own cache; its capacity is `owned` (grow/shrink at the end). */
  readonly own: DeviceBlockManager;
  /** 'stream' mode: master blocks living at the end of this model's region (only while it lends). */
  readonly lentToMaster: DeviceBlockManager;
  /** 'cache' mode: master blocks the master's own cache holds on this model's lent bytes. */
  cacheLoan: number;
  readonly demand: DemandWindow;
  readonly maxBlocks: number;
  resizeEvents: number;
}

/**
 * SwiftCache's coordinators (§3.4–3.5) for the models of one node, on one device budget.
 *
 * Each model owns a fixed region of the budget in block-major layout (`regionBlocks`, a whole
 * number of node elastic units). Its own cache uses the region's first `owned` blocks; a worker
 * lends the region's tail to the master. Invariants, for every worker w:
 *   owned(w) + lentBlocks(w) = regionBlocks(w), lentBlocks(w) · BE_w = borrowed-from-w(master) · BE_m,
 * and lent blocks are outside `own`'s id space, so the worker's requests can never allocate them.
 * Master block j lent by w lives at element `regionBlocks(w)·BE_w − (j+1)·BE_m` of w's region:
 * highest master ids sit next to the worker's owned end, so the worker reclaims (grows) exactly
 * what the master shrinks off its end — O(1) per block on both sides, nothing moved.
 *
 * The master is the model whose recent demand exceeds its own region the most (chosen from
 * demand, re-chosen only when nothing is lent). The caller owns the clock and the request path:
 * `observe` each request's token demand, `reclaimFor` before a worker admits a request it cannot
 * hold, `tick` periodically to lend idle units.
 */
export class ElasticCacheCoordinator {
  /** A coordinator over fresh managers sized `regionBlocks` (policy tests, benchmarks). */
  static withRegions(
    models: readonly ElasticModelSpec[],
    regionBlocks: Readonly<Record<string, number>>,
    windowMs: number,
    lendTo: 'stream' | 'cache' = 'stream',
  ): ElasticCacheCoordinator {
    return new ElasticCacheCoordinator(
      models.map((m) => {
        const n = regionBlocks[m.id];
        if (n === undefined || !Number.isSafeInteger(n) || n < 0)
          throw new RangeError(`region of ${m.id} must be a non-negative block count, got ${n}`);
        return { ...m, blocks: new DeviceBlockManager(n) };
      }),
      windowMs,
      lendTo,
    );
  }

  private readonly members = new Map<string, Member>();
  private masterId: string | null = null;

  /**
   * The engine's own block managers are resized in place: lending shrinks them, reclaiming grows
   * them. `lendTo` says what the master does with lent bytes: 'stream' — separate master blocks in
   * the lender's region (a layer stream cache's backing, addressed by {@link lentBlockOffset});
   * 'cache' — its own cache grows at its end by the same bytes (one device budget whose pages
   * move between models' reservations), and shrinks at its end when a worker reclaims.
   */
  constructor(
    models: readonly ElasticMember[],
    windowMs: number,
    readonly lendTo: 'stream' | 'cache' = 'stream',
  ) {
    if (models.length === 0) throw new RangeError('at least one model');
    for (const m of models) {
      if (this.members.has(m.id)) throw new RangeError(`model ${m.id} listed twice`);
      this.members.set(m.id, {
        spec: { id: m.id, shape: m.shape },
        blockElems: blockElements(m.shape),
        regionBlocks: m.blocks.capacity,
        own: m.blocks,
        lentToMaster: new DeviceBlockManager(0),
        cacheLoan: 0,
        demand: new DemandWindow(windowMs),
        maxBlocks: m.maxBlocks ?? Number.MAX_SAFE_INTEGER,
        resizeEvents: 0,
      });
    }
  }

  /** The node-wide alignment: elements that are a whole number of blocks of every model. */
  static nodeUnitElements(models: readonly ElasticModelSpec[]): number {
    return models.map((m) => blockElements(m.shape)).reduce((a, b) => lcm(a, b));
  }

  /**
   * Splits `budgetElements` evenly into regions of whole node units. Null when a model would get
   * no unit at all (the budget is too small for this set of models).
   */
  static splitBudget(models: readonly ElasticModelSpec[], budgetElements: number): Record<string, number> | null {
    const unit = ElasticCacheCoordinator.nodeUnitElements(models);
    const units = Math.floor(budgetElements / unit / models.length);
    if (units < 1) return null;
    return Object.fromEntries(models.map((m) => [m.id, (units * unit) / blockElements(m.shape)]));
  }

  get master(): string | null {
    return this.masterId;
  }

  /** The model's own cache; the engine allocates its requests' blocks from it. */
  ownBlocks(id: string): DeviceBlockManager {
    return this.member(id).own;
  }

  /** The master's blocks inside `workerId`'s region (layer stream backing store). */
  borrowedBlocks(workerId: string): DeviceBlockManager {
    return this.member(workerId).lentToMaster;
  }

  unit(workerId: string): ElasticUnit | null {
    if (this.masterId === null || workerId === this.masterId) return null;
    return minimumElasticUnit(this.member(this.masterId).spec.shape, this.member(workerId).spec.shape);
  }

  /** Element offset, inside `workerId`'s region, of the master's borrowed block `block`. */
  lentBlockOffset(workerId: string, block: number): number {
    const w = this.member(workerId);
    if (this.masterId === null) throw new Error('no master');
    if (!Number.isInteger(block) || block < 0 || block >= w.lentToMaster.capacity)
      throw new RangeError(`${workerId} lends no master block ${block}`);
    return w.regionBlocks * w.blockElems - (block + 1) * this.member(this.masterId).blockElems;
  }

  /** Records that `id` needed `tokens` of KV at `nowMs` (a request's prompt + output budget). */
  observe(id: string, nowMs: number, tokens: number): void {
    this.member(id).demand.record(nowMs, tokens);
  }

  /**
   * Periodic step: (re)elect the master when nothing is lent, then Algorithm 1 SCALEDOWN on each
   * worker, lending no more than the master's unmet demand. Returns the master blocks added.
   */
  tick(nowMs: number): number {
    if (this.totalLentBlocks() === 0) this.masterId = this.electMaster(nowMs);
    if (this.masterId === null) return 0;
    const master = this.member(this.masterId);
    const extra = this.lendTo === 'stream' ? this.borrowedTotal() : 0;
    let deficit = Math.max(0, Math.ceil(master.demand.max(nowMs) / master.spec.shape.blockTokens) - master.own.capacity - extra);
    let added = 0;
    for (const w of this.members.values()) {
      if (w === master || deficit === 0) continue;
      const unit = this.unit(w.spec.id)!;
      const step = scaleDown(w.own.capacity, w.spec.shape.blockTokens, unit, w.demand.max(nowMs));
      let k = Math.min(step.workerBlocks / unit.workerBlocks, Math.ceil(deficit / unit.masterBlocks));
      // 'cache' mode grows the master's own tensor: never past what it reserved.
      if (this.lendTo === 'cache') k = Math.min(k, Math.floor((master.maxBlocks - master.own.capacity) / unit.masterBlocks));
      // The worker's tail blocks may still be cached or held: lend only the units that are idle.
      while (k > 0 && !w.own.shrink(k * unit.workerBlocks)) k--;
      if (k === 0) continue;
      if (this.lendTo === 'stream') w.lentToMaster.grow(k * unit.masterBlocks);
      else {
        master.own.grow(k * unit.masterBlocks);
        w.cacheLoan += k * unit.masterBlocks;
      }
      w.resizeEvents++;
      master.resizeEvents++;
      added += k * unit.masterBlocks;
      deficit = Math.max(0, deficit - k * unit.masterBlocks);
    }
    return added;
  }

  /**
   * Algorithm 1 SCALEUP for a worker about to admit `tokens`: takes back whole units from the
   * master. Fails, changing nothing, when the master still holds those blocks (its layer stream
   * cache must move them to the host pool first, then call again).
   */
  reclaimFor(workerId: string, tokens: number): ReclaimResult {
    const w = this.member(workerId);
    const unit = this.unit(workerId);
    if (unit === null || this.loaned(w) === 0) return { ok: true, workerBlocks: 0, masterBlocks: 0 };
    const step = scaleUp(w.own.capacity, w.spec.shape.blockTokens, unit, tokens);
    const k = Math.min(step.workerBlocks / unit.workerBlocks, this.loaned(w) / unit.masterBlocks);
    if (k === 0) return { ok: true, workerBlocks: 0, masterBlocks: 0 };
    const back = this.lendTo === 'stream' ? w.lentToMaster : this.member(this.masterId!).own;
    if (!back.shrink(k * unit.masterBlocks)) return { ok: false, reason: 'master_blocks_in_use', masterBlocks: k * unit.masterBlocks };
    if (this.lendTo === 'cache') w.cacheLoan -= k * unit.masterBlocks;
    w.own.grow(k * unit.workerBlocks);
    w.resizeEvents++;
    this.member(this.masterId!).resizeEvents++;
    return { ok: true, workerBlocks: k * unit.workerBlocks, masterBlocks: k * unit.masterBlocks };
  }

  state(id: string): ElasticModelState {
    const m = this.member(id);
    const role = this.masterId === null ? 'idle' : id === this.masterId ? 'master' : 'worker';
    const lentBlocks = Math.max(0, m.regionBlocks - m.own.capacity);
    const borrowedBlocks = role === 'master' ? this.borrowedTotal() : 0;
    const perUnit = role === 'worker' ? this.unit(id)!.workerBlocks : this.nodeUnitBlocks(m);
    const ownedBlocks = role === 'master' && this.lendTo === 'cache' ? m.own.capacity - borrowedBlocks : m.own.capacity;
    const borrowedUnits =
      role === 'master'
        ? [...this.members.values()].reduce((a, w) => a + (w === m ? 0 : this.loaned(w) / this.unit(w.spec.id)!.masterBlocks), 0)
        : 0;
    return {
      id,
      role,
      ownedBlocks,
      lentBlocks,
      borrowedBlocks,
      ownedUnits: Math.floor(ownedBlocks / perUnit),
      lentUnits: lentBlocks / perUnit,
      borrowedUnits,
      resizeEvents: m.resizeEvents,
    };
  }

  /** Verifies the conservation invariant of every lender (tests, debug). */
  checkInvariant(): void {
    for (const w of this.members.values()) {
      const lent = w.regionBlocks - w.own.capacity;
      if (w.spec.id === this.masterId) {
        if (lent !== (this.lendTo === 'cache' ? -this.borrowedTotal() : 0))
          throw new Error(`master ${w.spec.id} holds ${-lent} blocks beyond its region, ${this.borrowedTotal()} borrowed`);
        continue;
      }
      if (lent < 0) throw new Error(`${w.spec.id} owns more than its region`);
      if (this.masterId === null) {
        if (lent !== 0 || this.loaned(w) !== 0) throw new Error(`${w.spec.id} lends without a master`);
        continue;
      }
      if (lent * w.blockElems !== this.loaned(w) * this.member(this.masterId).blockElems)
        throw new Error(`${w.spec.id}: lent and borrowed sizes differ`);
      w.own.checkInvariant();
      w.lentToMaster.checkInvariant();
    }
  }

  private electMaster(nowMs: number): string | null {
    let best: string | null = null;
    let bestDeficit = 0;
    for (const m of this.members.values()) {
      const deficit = (Math.ceil(m.demand.max(nowMs) / m.spec.shape.blockTokens) - m.regionBlocks) * m.blockElems;
      if (deficit > bestDeficit) [best, bestDeficit] = [m.spec.id, deficit];
    }
    return best;
  }

  private borrowedTotal(): number {
    let n = 0;
    for (const w of this.members.values()) n += this.loaned(w);
    return n;
  }

  /** Master blocks standing on `w`'s lent bytes. */
  private loaned(w: Member): number {
    return this.lendTo === 'stream' ? w.lentToMaster.capacity : w.cacheLoan;
  }

  private totalLentBlocks(): number {
    let n = 0;
    for (const w of this.members.values()) n += Math.max(0, w.regionBlocks - w.own.capacity);
    return n;
  }

  private nodeUnitBlocks(m: Member): number {
    return ElasticCacheCoordinator.nodeUnitElements([...this.members.values()].map((x) => x.spec)) / m.blockElems;
  }

  private member(id: string): Member {
    const m = this.members.get(id);
    if (!m) throw new RangeError(`unknown model ${id}`);
    return m;
  }
}
