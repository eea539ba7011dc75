import { BlockGroupTable } from './block-group.table.js';
import { FreeRunIndex } from './free-run.index.js';

/**
 * The free ids of a grouped device block manager (FastSwitch §3.1), partitioned: each is either
 * in a free run no group reserves ({@link FreeRunIndex}) or in the unused tail of exactly one
 * owner's block group ({@link BlockGroupTable}). An owner allocates the next ids of its group; a
 * used-up group is followed by a new one of max(groupBlocks, wanted) ids from the free runs (the
 * smallest size order that fits, split), else the back half of the longest unused tail of
 * another owner's group (stolen). O(1) per id plus O(size orders) per new group and O(groups)
 * per steal. The manager keeps its free stack beside this; both list the same ids.
 */
export class GroupedFreeIds {
  readonly runs = new FreeRunIndex();
  readonly groups = new BlockGroupTable();

  constructor(readonly groupBlocks: number) {
    if (!Number.isInteger(groupBlocks) || groupBlocks < 1)
      throw new RangeError(`groupBlocks must be a positive integer, got ${groupBlocks}`);
  }

  /** The next reserved id of the owner's group, taken; undefined when it has none left. */
  next(owner: string): number | undefined {
    const g = this.groups.get(owner);
    return g && g.next < g.end ? g.next++ : undefined;
  }

  /** Opens a new group for the owner with at least `wanted` ids (groupBlocks at least); false when no run or tail has room. */
  open(owner: string, wanted: number): boolean {
    const want = Math.max(wanted, this.groupBlocks);
    const run = this.runs.take(want) ?? this.steal(owner, want);
    if (!run) return false;
    this.groups.open(owner, run.start, run.end);
    return true;
  }

  /** Returns the unused tail of the owner's group to the free runs. */
  close(owner: string): void {
    const tail = this.groups.close(owner);
    if (tail) this.runs.addRange(tail.start, tail.end);
  }

  /** `n` ids from the free runs alone (never a group's tail), or null when they hold fewer. */
  takeUnreserved(n: number): number[] | null {
    if (this.runs.size < n) return null;
    const ids: number[] = [];
    while (ids.length < n) {
      const run = this.runs.take(n - ids.length)!;
      for (let id = run.start; id < run.end; id++) ids.push(id);
    }
    return ids;
  }

  /** Ids [start, end) are free again. */
  free(start: number, end: number): void {
    this.runs.addRange(start, end);
  }

  /** The id space grew from `from` to `capacity`: the new ids are free. */
  grow(from: number, capacity: number): void {
    this.runs.resize(capacity);
    this.runs.addRange(from, capacity);
  }

  /** The id space shrinks to `capacity` (no id past it is held). */
  shrink(capacity: number): void {
    this.groups.clip(capacity);
    this.runs.truncate(capacity);
    this.runs.resize(capacity);
  }

  /** Every free id range, runs and tails (invariant checks). */
  ranges(): Array<[number, number]> {
    return [...this.runs.runs(), ...this.groups.tails()];
  }

  private steal(owner: string, want: number): { start: number; end: number } | null {
    const victim = this.groups.longestTail(owner);
    if (!victim) return null;
    const take = Math.min(want, Math.ceil((victim.end - victim.next) / 2));
    victim.end -= take;
    return { start: victim.end, end: victim.end + take };
  }
}
