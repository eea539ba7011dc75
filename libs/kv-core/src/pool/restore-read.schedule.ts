/** How a layer-wise restore reads and copies (the defaults are what measured best; the rest exists for A/B measurements). */
export interface RestoreReadOptions {
  /**
   * Start copying layer l + 1 when layer l is loaded (default true). Off only for same-process
   * A/B measurements: the copy then starts when the engine asks for the layer.
   */
  readonly copyAhead?: boolean;
  /** Layers copied ahead (default 1); for A/B measurements. */
  readonly copyAheadLayers?: number;
  /** SSD bytes read ahead of the layer loaded (default READ_AHEAD_BYTES); for A/B measurements. */
  readonly readAheadBytes?: number;
  /**
   * How SSD reads are grouped (default `ring`): `ring` reads each layer in its own transfer and
   * keeps the read-ahead budget's worth of layers in flight, each handed on as soon as it lands;
   * `windows` reads windows of half the budget, two at a time, each used once all of it is read
   * (the earlier design, kept for same-process A/B measurements).
   */
  readonly ssdReads?: 'ring' | 'windows';
  /** Read groups started one at a time before the budget fills (default SLOW_START_GROUPS); for A/B measurements. */
  readonly slowStartGroups?: number;
}

/**
 * SSD reads kept in flight ahead of the layer being loaded: a layer-wise restore of a few
 * chunks reads only a few MiB per layer, far too little to keep an SSD's queue busy on its own.
 * Each layer is one transfer (its segments, many requests in the device queue); every load
 * tops the ring up to this many bytes of layers from the one loaded on, and a layer is used as
 * soon as its own reads land — no layer waits for a whole window, and the queue never drains
 * at a window boundary. 64 MiB: the SSD pool's queue (64 requests of one 1 MiB segment) full,
 * as the raw O_DIRECT limit keeps it; 32 MiB kept it half full (a 256 MiB SSD get was faster
 * with 64 MiB in each of nine same-process pairs, by 5–35 %).
 */
export const READ_AHEAD_BYTES = 64 * 1024 * 1024;

/**
 * Read groups a restore starts one at a time before it fills its read-ahead budget. Two:
 * in-process A/B of a restore beside compute (mnemo-medium, SSD, 12 pairs each, interleaved):
 * TTFT over device-only 15.2 -> 8.1 ms at 896 restored tokens and 6.7 -> 4.4 ms at 288; one
 * group alone helped about half as much, three no more than two.
 */
export const SLOW_START_GROUPS = 2;

/**
 * Layers copied ahead of the one loaded: each load tops the queue up, so the copy threads find
 * the next layers queued instead of idling through a round trip through JS per layer. Three: on
 * a quiet machine one, two and three measured the same (same-process A/B, 15 rounds of 256 MiB
 * host gets: ratios 1.02 and 1.00), but with other work on the cores the event loop is often
 * off-CPU for longer than one layer's copy, and three layers queued kept the copy threads busy
 * through it (256 MiB host gets faster in 9 of 13 same-process pairs at a load average of 5;
 * SSD gets the same). Each costs a layer payload buffer.
 */
export const COPY_AHEAD_LAYERS = 3;

/**
 * Which layers of a layer-wise restore are read together from SSD, how far ahead of the engine
 * reads run, and how far ahead copies out of host memory run. Pure arithmetic over the restore's
 * shape, plus which copies ahead to start or wait out and the slow start of the first reads: the
 * reader (and the twin) follow it.
 */
export class RestoreReadSchedule {
  /** Layers copied ahead of the one loaded. */
  readonly copyDepth: number;
  /** Layers read in one transfer: one in the ring; half the read-ahead budget's worth in windows. */
  readonly groupLayers: number;
  /** Read groups kept started from the loaded layer's on: the budget's worth of layers (at least the copy depth's), or two windows. */
  readonly aheadGroups: number;
  /** Groups the first call starts one at a time (each once the one before has landed). */
  readonly slowStartGroups: number;
  /** The first read groups were started (slowly, see startReads): later calls start theirs at once. */
  private headStarted = false;

  constructor(
    readonly layers: number,
    /** Bytes one layer of the restore reads (its chunks × the segment stride). */
    layerBytes: number,
    readonly options: RestoreReadOptions = {},
  ) {
    const bytes = Math.max(1, layerBytes);
    const budget = options.readAheadBytes ?? READ_AHEAD_BYTES;
    this.copyDepth = options.copyAhead === false ? 0 : (options.copyAheadLayers ?? COPY_AHEAD_LAYERS);
    const windows = options.ssdReads === 'windows';
    this.groupLayers = windows ? Math.max(1, Math.floor(budget / 2 / bytes)) : 1;
    this.aheadGroups = windows ? 2 : Math.max(this.copyDepth + 1, Math.floor(budget / bytes));
    this.slowStartGroups = options.slowStartGroups ?? SLOW_START_GROUPS;
  }

  /** Payload slots a reader cycles through: the layer handed out last, the one being loaded, those copied ahead. */
  get slots(): number {
    return this.copyDepth + 2;
  }

  groupOf(layer: number): number {
    return Math.floor(layer / this.groupLayers);
  }

  /** Layers [start, end) of read group `w`, from layer `from` on. */
  groupRange(w: number, from = 0): { start: number; end: number } {
    return { start: Math.max(from, w * this.groupLayers), end: Math.min(this.layers, (w + 1) * this.groupLayers) };
  }

  /** The group after the last one to have started once the engine is at group `first`. */
  aheadEnd(first: number): number {
    return first + this.aheadGroups;
  }

  /**
   * Copies made ahead that are stale once `layer` loads (the engine loaded out of order): at or
   * before it, or beyond its copy depth. Each may still be writing into a slot this load or the
   * next copies need, so it must land first (its result, and any error, belong to nobody).
   */
  staleCopies(ahead: Iterable<number>, layer: number): number[] {
    return [...ahead].filter((l) => l <= layer || l > layer + this.copyDepth);
  }

  /**
   * The layers to start copying once `layer` is loaded, the copy depth's worth, skipping those
   * already being copied (`copying`). Lazy: each is asked about after the one before started. The
   * next layers' copies queue behind this one; each one's slot held a layer whose use has ended
   * (layer - 2 or earlier). With the ring their SSD reads are already in flight, and each copy
   * starts the moment its reads land. NOTE: `windows` copies ahead only layers all in host memory
   * already (`inHost`): there a copy ahead waiting on SSD reads started the next window early, and
   * windows read side by side finish together (SSD gets were 2–38% slower in six same-process A/Bs).
   */
  *copiesAfter(layer: number, copying: (layer: number) => boolean, inHost: (layer: number) => boolean): Generator<number> {
    const ring = this.options.ssdReads !== 'windows';
    for (let next = layer + 1; next <= Math.min(layer + this.copyDepth, this.layers - 1); next++) {
      if (!copying(next) && (ring || inHost(next))) yield next;
    }
  }

  /**
   * Starts the read groups from `first` on, the read-ahead budget's worth, through `start` (the
   * group's read, or undefined when it has nothing to read). The restore's very first call starts
   * the first {@link slowStartGroups} one at a time (each once the one before has landed), then
   * the rest: the engine waits for the first layer at once, and reads queued beside it on the same
   * device delay it (a 288-token restore's first layer took 5 ms with all eight layers queued, 2
   * ms alone); later layers have the compute of the earlier ones to land in. Nothing more starts
   * once `stopped` (the restore was released).
   */
  startReads(first: number, start: (group: number) => Promise<unknown> | undefined, stopped: () => boolean): void {
    const end = this.aheadEnd(first);
    const rest = (g: number) => {
      if (stopped()) return;
      for (; g < end; g++) start(g);
    };
    if (this.headStarted) return rest(first);
    this.headStarted = true;
    const step = (g: number, alone: number) => {
      if (stopped() || g >= end) return;
      const p = start(g);
      if (alone === 0 || !p) return rest(g + 1);
      const next = () => step(g + 1, alone - 1);
      p.then(next, next);
    };
    step(first, this.slowStartGroups);
  }
}
