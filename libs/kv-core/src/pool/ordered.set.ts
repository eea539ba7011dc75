/** Total order over the items of an {@link OrderedSet}: negative, zero (same item) or positive. */
export type Comparator<T> = (a: T, b: T) => number;

class Node<T> {
  left: Node<T> | null = null;
  right: Node<T> | null = null;
  constructor(
    readonly item: T,
    readonly priority: number,
  ) {}
}

/**
 * A sorted set on a treap: insert, delete, first/last and neighbour queries (`ceiling`,
 * `higher`, `floor`, `lower`) in O(log n) expected time. JavaScript has no ordered container,
 * and the pool's hot paths need one: best-fit by size, neighbours by offset, and "next victim
 * after this one" in eviction and expiry order.
 *
 * Invariant (checked by {@link OrderedSet.checkInvariant}): in-order traversal is strictly
 * increasing under `compare` (no two items compare equal), and every node's priority is ≥ its
 * children's (heap order), which keeps the expected depth O(log n).
 *
 * Items must not change the fields `compare` reads while they are in the set: delete, change,
 * insert. Priorities come from a seeded xorshift generator so a run is reproducible.
 */
export class OrderedSet<T> {
  private root: Node<T> | null = null;
  private count = 0;
  private seed = 0x2545f491;

  constructor(private readonly compare: Comparator<T>) {}

  get size(): number {
    return this.count;
  }

  /** Adds `item`; an item comparing equal to one already present is a caller bug and throws. */
  insert(item: T): void {
    this.root = this.insertAt(this.root, item, this.nextPriority());
    this.count++;
  }

  /** Removes the item comparing equal to `item`; false if there is none. */
  delete(item: T): boolean {
    const before = this.count;
    this.root = this.deleteAt(this.root, item);
    return this.count < before;
  }

  has(item: T): boolean {
    let n = this.root;
    while (n) {
      const c = this.compare(item, n.item);
      if (c === 0) return true;
      n = c < 0 ? n.left : n.right;
    }
    return false;
  }

  first(): T | undefined {
    let n = this.root;
    if (!n) return undefined;
    while (n.left) n = n.left;
    return n.item;
  }

  last(): T | undefined {
    let n = this.root;
    if (!n) return undefined;
    while (n.right) n = n.right;
    return n.item;
  }

  /** Smallest item ≥ `probe`. The probe need not be in the set. */
  ceiling(probe: T): T | undefined {
    return this.search(probe, true, true);
  }

  /** Smallest item > `probe`. */
  higher(probe: T): T | undefined {
    return this.search(probe, true, false);
  }

  /** Largest item ≤ `probe`. */
  floor(probe: T): T | undefined {
    return this.search(probe, false, true);
  }

  /** Largest item < `probe`. */
  lower(probe: T): T | undefined {
    return this.search(probe, false, false);
  }

  /** In-order items; O(n), for tests, compaction and invariant checks rather than hot paths. */
  *[Symbol.iterator](): IterableIterator<T> {
    const stack: Node<T>[] = [];
    let n = this.root;
    while (n || stack.length > 0) {
      while (n) {
        stack.push(n);
        n = n.left;
      }
      const top = stack.pop()!;
      yield top.item;
      n = top.right;
    }
  }

  /** Verifies order, heap priorities and the size; O(n). */
  checkInvariant(): void {
    let seen = 0;
    const walk = (n: Node<T> | null, lo: T | undefined, hi: T | undefined): void => {
      if (!n) return;
      seen++;
      if (lo !== undefined && this.compare(lo, n.item) >= 0) throw new Error('ordered set out of order');
      if (hi !== undefined && this.compare(n.item, hi) >= 0) throw new Error('ordered set out of order');
      if ((n.left && n.left.priority > n.priority) || (n.right && n.right.priority > n.priority)) {
        throw new Error('ordered set heap order broken');
      }
      walk(n.left, lo, n.item);
      walk(n.right, n.item, hi);
    };
    walk(this.root, undefined, undefined);
    if (seen !== this.count) throw new Error(`ordered set holds ${seen} nodes but counts ${this.count}`);
  }

  private search(probe: T, upward: boolean, inclusive: boolean): T | undefined {
    let n = this.root;
    let best: T | undefined;
    while (n) {
      const c = this.compare(probe, n.item);
      if (c === 0 && inclusive) return n.item;
      const goLeft = upward ? c < 0 : c <= 0;
      if (goLeft === upward) best = n.item;
      n = goLeft ? n.left : n.right;
    }
    return best;
  }

  private insertAt(n: Node<T> | null, item: T, priority: number): Node<T> {
    if (!n) return new Node(item, priority);
    const c = this.compare(item, n.item);
    if (c === 0) throw new Error('ordered set already holds an equal item');
    // Insert on the item's side; a child that outranks n rotates up over it (mirror images).
    const [near, far] = c < 0 ? (['left', 'right'] as const) : (['right', 'left'] as const);
    const child = this.insertAt(n[near], item, priority);
    n[near] = child;
    if (child.priority > n.priority) {
      n[near] = child[far];
      child[far] = n;
      return child;
    }
    return n;
  }

  private deleteAt(n: Node<T> | null, item: T): Node<T> | null {
    if (!n) return null;
    const c = this.compare(item, n.item);
    if (c === 0) {
      this.count--;
      return merge(n.left, n.right);
    }
    if (c < 0) n.left = this.deleteAt(n.left, item);
    else n.right = this.deleteAt(n.right, item);
    return n;
  }

  private nextPriority(): number {
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed;
  }
}

/** Joins two treaps where every item of `a` precedes every item of `b`. */
function merge<T>(a: Node<T> | null, b: Node<T> | null): Node<T> | null {
  if (!a) return b;
  if (!b) return a;
  if (a.priority > b.priority) {
    a.right = merge(a.right, b);
    return a;
  }
  b.left = merge(a, b.left);
  return b;
}
