/**
 * Finds OpenAI `stop` strings in streamed text. Text that might be the start of a stop
 * string is held back until the next piece decides it, so a client never sees part of a
 * stop string and nothing after one.
 */
export class StopStringMatcher {
  private pending = '';

  constructor(private readonly stops: readonly string[]) {}

  /** `text` is safe to emit; `stopped` means a stop string was found and the text ends before it. */
  push(piece: string): { text: string; stopped: boolean } {
    if (this.stops.length === 0) return { text: piece, stopped: false };
    const buf = this.pending + piece;
    let at = -1;
    for (const s of this.stops) {
      const i = buf.indexOf(s);
      if (i >= 0 && (at < 0 || i < at)) at = i;
    }
    if (at >= 0) {
      this.pending = '';
      return { text: buf.slice(0, at), stopped: true };
    }
    let keep = 0;
    for (const s of this.stops) {
      for (let k = Math.min(s.length - 1, buf.length); k > keep; k--) {
        if (buf.endsWith(s.slice(0, k))) {
          keep = k;
          break;
        }
      }
    }
    this.pending = buf.slice(buf.length - keep);
    return { text: buf.slice(0, buf.length - keep), stopped: false };
  }

  /** Held-back text, released when generation ended without completing a stop string. */
  flush(): string {
    const p = this.pending;
    this.pending = '';
    return p;
  }
}
