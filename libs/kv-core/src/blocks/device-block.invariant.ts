/** A device block manager's state, as its invariant check reads it. */
export interface DeviceBlockState {
  readonly refs: readonly number[];
  readonly keys: ReadonlyArray<string | undefined>;
  readonly byKey: ReadonlyMap<string, number>;
  readonly free: ReadonlySet<number>;
  readonly cached: ReadonlySet<number>;
  readonly staged: ReadonlySet<number>;
  /** Blocks the staged chunks claim (each once). */
  readonly stagedBlocks: number;
  /** Grouped mode: every free range, runs and group tails. */
  readonly freeRanges?: ReadonlyArray<[number, number]>;
}

/**
 * Throws on the first broken invariant of DeviceBlockManager's states (free, cached, staged,
 * active; see its docstring). O(capacity): for tests and debug checks, not the hot path.
 */
export function checkDeviceBlockState(s: DeviceBlockState): void {
  const { free, cached, staged } = s;
  let stagedSeen = 0;
  for (let id = 0; id < s.refs.length; id++) {
    const r = s.refs[id]!;
    const key = s.keys[id];
    if (!Number.isInteger(r) || r < 0) throw new Error(`block ${id} has refCount ${r}`);
    if (free.has(id) && (r !== 0 || key !== undefined || cached.has(id))) throw new Error(`free block ${id} inconsistent`);
    if (cached.has(id) && (r !== 0 || key === undefined)) throw new Error(`cached block ${id} inconsistent`);
    if (staged.has(id)) {
      stagedSeen++;
      if (r !== 0 || key !== undefined || free.has(id) || cached.has(id)) throw new Error(`staged block ${id} inconsistent`);
    }
    if (r === 0 && !free.has(id) && !cached.has(id) && !staged.has(id))
      throw new Error(`unheld block ${id} is neither free, cached nor staged`);
    if (key !== undefined && s.byKey.get(key) !== id) throw new Error(`block ${id} key ${key} not indexed`);
  }
  if (stagedSeen !== staged.size || staged.size !== s.stagedBlocks)
    throw new Error('staged blocks outside the id space, or shared by two chunks');
  for (const [key, id] of s.byKey) if (s.keys[id] !== key) throw new Error(`key ${key} points at block ${id} holding ${s.keys[id]}`);
  if (!s.freeRanges) return;
  // Grouped: the free ids are exactly the free runs plus the groups' unused tails, disjoint.
  const seen = new Set<number>();
  for (const [a, b] of s.freeRanges) {
    for (let id = a; id < b; id++) {
      if (seen.has(id) || !free.has(id)) throw new Error(`block ${id} in a free run or group tail is not free, or listed twice`);
      seen.add(id);
    }
  }
  if (seen.size !== free.size) throw new Error(`${free.size - seen.size} free blocks are in no free run or group tail`);
}
