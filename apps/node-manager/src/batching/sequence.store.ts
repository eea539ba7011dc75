import { Injectable } from '@nestjs/common';
import type { SeqState } from '@mnemo/kv-core';
import type { Sequence } from '../shared/sequence.js';

/** How often the loop wakes while every sequence is paused: the granularity of their deadline checks. */
const PAUSED_RECHECK_MS = 100;

/**
 * The node's queue (waiting) and batch (running), keyed by request id. Insertion order is
 * kept, and `whenWork` lets the loop sleep without polling while both are empty.
 */
@Injectable()
export class SequenceStore {
  private readonly seqs = new Map<string, Sequence>();
  private nextArrival = 0;
  private wake?: () => void;
  private readonly added: Array<(seq: Sequence) => void> = [];
  private readonly removed: Array<(seq: Sequence) => void> = [];

  arrivalSeq(): number {
    return this.nextArrival++;
  }

  add(seq: Sequence): void {
    if (this.seqs.has(seq.id)) throw new RangeError(`request ${seq.id} is already on this node`);
    this.seqs.set(seq.id, seq);
    for (const f of this.added) f(seq);
    this.wake?.();
  }

  /** Calls `f` with each sequence added from now on, once it is in the store. */
  onAdded(f: (seq: Sequence) => void): void {
    this.added.push(f);
  }

  get(id: string): Sequence | undefined {
    return this.seqs.get(id);
  }

  has(id: string): boolean {
    return this.seqs.has(id);
  }

  remove(id: string): Sequence | undefined {
    const s = this.seqs.get(id);
    this.seqs.delete(id);
    if (s) for (const f of this.removed) f(s);
    return s;
  }

  /** Calls `f` with each sequence removed from now on (finished, cancelled, failed), once it is out of the store. */
  onRemoved(f: (seq: Sequence) => void): void {
    this.removed.push(f);
  }

  all(): Sequence[] {
    return [...this.seqs.values()];
  }

  count(phase: Sequence['phase']): number {
    let n = 0;
    for (const s of this.seqs.values()) if (s.phase === phase) n++;
    return n;
  }

  get size(): number {
    return this.seqs.size;
  }

  /** Planner view: waiting sequences carry their prompt length, running ones do not need it. Paused ones are left out. */
  states(phase: Sequence['phase']): SeqState[] {
    const out: SeqState[] = [];
    for (const s of this.seqs.values()) {
      if (s.phase === phase && !s.paused)
        out.push({ id: s.id, promptTokens: s.request.tokens.length, priority: s.request.priority, arrivalSeq: s.arrivalSeq });
    }
    return out;
  }

  /** Pauses or resumes a sequence (backpressure); a resume wakes the loop. */
  setPaused(id: string, paused: boolean): boolean {
    const s = this.seqs.get(id);
    if (!s) return false;
    s.paused = paused;
    if (!paused) this.wake?.();
    return true;
  }

  /** Some sequence can take part in an iteration (not all are paused). */
  hasRunnable(): boolean {
    for (const s of this.seqs.values()) if (!s.paused) return true;
    return false;
  }

  /**
   * Resolves when there is runnable work (at once if there is), when a sequence is added or
   * resumed, or when `interrupt` is called. While only paused sequences are held it also
   * resolves every PAUSED_RECHECK_MS, so the loop still expires their deadlines.
   */
  whenWork(): Promise<void> {
    if (this.hasRunnable()) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = this.seqs.size > 0 ? setTimeout(() => this.wake?.(), PAUSED_RECHECK_MS) : undefined;
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  interrupt(): void {
    this.wake?.();
  }
}
