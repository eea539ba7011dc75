/** One merge rule: the rank (lower merges first) and the id of the merged token. */
export interface MergeRule {
  readonly rank: number;
  readonly merged: number;
}

/** Numeric key of the ordered pair (left, right) of token ids; exact for ids below 2^26. */
export function pairKey(left: number, right: number): number {
  return left * 0x4000000 + right;
}

/** Token ids must stay below this for {@link pairKey} to be unique. */
export const MAX_MERGE_TOKEN_ID = 0x4000000;

/**
 * Byte-pair merging of one word in O(n log n) (the Hugging Face `tokenizers` algorithm):
 * symbols form a doubly linked list over the input positions, and a binary min-heap holds
 * every candidate pair ordered by (rank, left position). Popping the best pair merges it in
 * place and pushes the two pairs it forms with its neighbours. An entry is stale when its
 * left symbol died or the pair now there has another rank; ranks are unique per pair, so
 * equal rank means the same pair, and such entries are skipped. The old rescan-every-round
 * loop was quadratic in the word length, which let one long word hold the event loop.
 *
 * Ties go to the leftmost pair, so for merge lists learned in training order (a merge's
 * parts always exist before it) this equals the reference "merge every occurrence of the
 * lowest-ranked pair" loop. `ids` may hold -1 for symbols outside the vocabulary: they
 * never merge. Returns the surviving ids in order.
 */
export function mergeWord(ids: readonly number[], rules: ReadonlyMap<number, MergeRule>): number[] {
  const n = ids.length;
  if (n < 2) return [...ids];
  const sym = Int32Array.from(ids);
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
  }
  const heap = new PairHeap(n);
  const rankAt = (left: number): number => {
    const right = next[left]!;
    if (right < 0 || sym[left]! < 0 || sym[right]! < 0) return -1;
    return rules.get(pairKey(sym[left]!, sym[right]!))?.rank ?? -1;
  };
  for (let i = 0; i + 1 < n; i++) {
    const r = rankAt(i);
    if (r >= 0) heap.push(r, i);
  }
  while (heap.size > 0) {
    const rank = heap.topRank();
    const left = heap.pop();
    // Dead symbols have sym = -2, so a stale entry never matches its old rank.
    if (rankAt(left) !== rank) continue;
    const right = next[left]!;
    sym[left] = rules.get(pairKey(sym[left]!, sym[right]!))!.merged;
    sym[right] = -2;
    const after = next[right]!;
    next[left] = after;
    if (after >= 0) prev[after] = left;
    const before = prev[left]!;
    if (before >= 0) {
      const r = rankAt(before);
      if (r >= 0) heap.push(r, before);
    }
    const r = rankAt(left);
    if (r >= 0) heap.push(r, left);
  }
  const out: number[] = [];
  for (let i = 0; i >= 0; i = next[i]!) out.push(sym[i]!);
  return out;
}

/** Min-heap of (rank, position) pairs in two parallel growable typed arrays. */
class PairHeap {
  private ranks: Int32Array;
  private pos: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.ranks = new Int32Array(Math.max(16, capacity));
    this.pos = new Int32Array(Math.max(16, capacity));
  }

  topRank(): number {
    return this.ranks[0]!;
  }

  push(rank: number, position: number): void {
    if (this.size === this.ranks.length) this.grow();
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(rank, position, this.ranks[parent]!, this.pos[parent]!)) break;
      this.ranks[i] = this.ranks[parent]!;
      this.pos[i] = this.pos[parent]!;
      i = parent;
    }
    this.ranks[i] = rank;
    this.pos[i] = position;
  }

  /** Removes the best entry and returns its position. */
  pop(): number {
    const top = this.pos[0]!;
    const last = --this.size;
    const rank = this.ranks[last]!;
    const position = this.pos[last]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      if (child + 1 < last && this.less(this.ranks[child + 1]!, this.pos[child + 1]!, this.ranks[child]!, this.pos[child]!)) child++;
      if (!this.less(this.ranks[child]!, this.pos[child]!, rank, position)) break;
      this.ranks[i] = this.ranks[child]!;
      this.pos[i] = this.pos[child]!;
      i = child;
    }
    this.ranks[i] = rank;
    this.pos[i] = position;
    return top;
  }

  private less(ra: number, pa: number, rb: number, pb: number): boolean {
    return ra < rb || (ra === rb && pa < pb);
  }

  private grow(): void {
    const ranks = new Int32Array(this.ranks.length * 2);
    const pos = new Int32Array(this.pos.length * 2);
    ranks.set(this.ranks);
    pos.set(this.pos);
    this.ranks = ranks;
    this.pos = pos;
  }
}
