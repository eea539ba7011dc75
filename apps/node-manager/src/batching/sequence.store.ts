import { Injectable } from '@nestjs/common';
import type { SeqState } from '@mnemo/kv-core';
import type { Sequence } from './sequence.js';

/**
 * The node's queue (waiting) and batch (running), keyed by request id. Insertion order is
 * kept, and `whenWork` lets the loop sleep without polling while both are empty.
 */
@Injectable()
export class SequenceStore {
  private readonly seqs = new Map<string, Sequence>();
  private nextArrival = 0;
  private wake?: () => void;

  arrivalSeq(): number {
    return this.nextArrival++;
  }

  add(seq: Sequence): void {
    if (this.seqs.has(seq.id)) throw new RangeError(`request ${seq.id} is already on this node`);
    this.seqs.set(seq.id, seq);
    this.wake?.();
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
    return s;
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

  /** Planner view: waiting sequences carry their prompt length, running ones do not need it. */
  states(phase: Sequence['phase']): SeqState[] {
    const out: SeqState[] = [];
    for (const s of this.seqs.values()) {
      if (s.phase === phase) out.push({ id: s.id, promptTokens: s.request.tokens.length, priority: s.request.priority, arrivalSeq: s.arrivalSeq });
    }
    return out;
  }

  /** Resolves when a sequence is added (at once if some are queued), or when `interrupt` is called. */
  whenWork(): Promise<void> {
    if (this.seqs.size > 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  interrupt(): void {
    this.wake?.();
  }
}
