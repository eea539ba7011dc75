import { blocksFor } from '@mnemo/kv-core';

/**
 * Host memory of the swap twin: one copy per conversation (the tokens it holds), in
 * least-recently-used order (Map order), within a limit of `limitBlocks` blocks.
 */
export class HostSwapCopies {
  private readonly copies = new Map<number, number>();
  private blocks = 0;

  constructor(private readonly limitBlocks: number) {}

  /** Tokens of `conv`'s copy, if it has one. */
  get(conv: number): number | undefined {
    return this.copies.get(conv);
  }

  /**
   * Host room for a copy of `blocks` blocks for `conv`: other conversations' idle copies go
   * (not those in `swappedOut()`), least recently used first. True once the room is accounted;
   * the caller then {@link record}s the copy's tokens.
   */
  makeRoom(conv: number, blocks: number, swappedOut: () => ReadonlySet<number>): boolean {
    const need = (b: number) => b - blocksFor(this.copies.get(conv) ?? 0);
    if (this.blocks + need(blocks) <= this.limitBlocks) return this.resize(conv, blocks);
    const busy = swappedOut();
    for (const other of [...this.copies.keys()]) {
      if (this.blocks + need(blocks) <= this.limitBlocks) break;
      if (other !== conv && !busy.has(other)) this.drop(other);
    }
    return this.blocks + need(blocks) <= this.limitBlocks && this.resize(conv, blocks);
  }

  /** `conv`'s copy now holds `tokens`, most recently used. */
  record(conv: number, tokens: number): void {
    this.copies.delete(conv);
    this.copies.set(conv, tokens);
  }

  drop(conv: number): void {
    const tokens = this.copies.get(conv);
    if (tokens === undefined) return;
    this.blocks -= blocksFor(tokens);
    this.copies.delete(conv);
  }

  /** Accounts the copy's new size. */
  private resize(conv: number, blocks: number): true {
    this.blocks += blocks - blocksFor(this.copies.get(conv) ?? 0);
    return true;
  }
}
