// A seeded multi-turn trace in time, for benchmarks that drive a node's scheduler directly.
// Conversations start as a Poisson process (exponential gaps); a conversation's next turn
// arrives an exponential think time after its previous reply ended, on the clock of the system
// under test; every turn's prompt is the conversation so far (each earlier prompt's new tokens
// and every reply) plus the user's new tokens. The draws are made up front, so two systems fed
// the same trace see the same conversations, gaps and think times, whatever their speed.
import { exponential, rng } from './figures.js';

/** A turn whose time has come: its request id and the whole prompt (history plus the new tokens). */
export interface DueTurn {
  requestId: string;
  conversation: number;
  turn: number;
  arrivedAtMs: number;
  tokens: number[];
}

export interface ConversationTraceOptions {
  readonly conversations: number;
  readonly turns: number;
  readonly userTokens: number;
  readonly meanStartGapMs: number;
  readonly meanThinkMs: number;
  readonly seed: number;
  readonly vocab?: number;
}

interface Conversation {
  c: number;
  turn: number;
  history: number[];
  arriveAt: number;
  think: number[];
  live: { requestId: string; prompt: number[] } | undefined;
}

export class ConversationTrace {
  readonly turns: number;
  private readonly userTokens: number;
  private readonly vocab: number;
  private readonly convs: Conversation[];
  private readonly byRequest = new Map<string, Conversation>();

  constructor(o: ConversationTraceOptions) {
    for (const k of ['conversations', 'turns', 'userTokens'] as const)
      if (!(Number.isInteger(o[k]) && o[k] > 0)) throw new RangeError(`${k} must be a positive integer, got ${o[k]}`);
    for (const k of ['meanStartGapMs', 'meanThinkMs'] as const) if (!(o[k] >= 0)) throw new RangeError(`${k} must be ≥ 0, got ${o[k]}`);
    this.turns = o.turns;
    this.userTokens = o.userTokens;
    this.vocab = o.vocab ?? 250;
    const r = rng(o.seed);
    let start = 0;
    this.convs = Array.from({ length: o.conversations }, (_, c): Conversation => {
      if (c > 0) start += exponential(r, o.meanStartGapMs);
      return {
        c,
        turn: 0,
        history: [],
        arriveAt: start,
        think: Array.from({ length: o.turns }, () => exponential(r, o.meanThinkMs)),
        live: undefined,
      };
    });
  }

  /** The user's new tokens of turn `t` of conversation `c` (deterministic, distinct per turn). */
  userTurn(c: number, t: number): number[] {
    return Array.from({ length: this.userTokens }, (_, i) => (c * 131 + t * 17 + i * 7 + 3) % this.vocab);
  }

  /**
   * Turns whose arrival time has come by `nowMs` and whose conversation has no turn in flight:
   * each { requestId, conversation, turn, tokens } with a fresh tokens array the caller may hand
   * on (a protobuf message keeps it by reference) without touching the trace's history.
   */
  due(nowMs: number): DueTurn[] {
    const out: DueTurn[] = [];
    for (const cv of this.convs) {
      if (cv.live || cv.turn >= this.turns || cv.arriveAt > nowMs) continue;
      const prompt = [...cv.history, ...this.userTurn(cv.c, cv.turn)];
      const requestId = `c${cv.c}t${cv.turn}`;
      cv.live = { requestId, prompt };
      this.byRequest.set(requestId, cv);
      out.push({ requestId, conversation: cv.c, turn: cv.turn, arrivedAtMs: cv.arriveAt, tokens: [...prompt] });
    }
    return out;
  }

  /** The reply of `requestId` is complete at `nowMs`: the history becomes prompt + reply and the next turn is scheduled. */
  replyDone(requestId: string, replyTokens: readonly number[], nowMs: number): void {
    const cv = this.byRequest.get(requestId);
    if (!cv || cv.live?.requestId !== requestId) throw new Error(`no turn in flight for ${requestId}`);
    this.byRequest.delete(requestId);
    cv.history = [...cv.live.prompt, ...replyTokens];
    cv.live = undefined;
    cv.turn++;
    if (cv.turn < this.turns) cv.arriveAt = nowMs + cv.think[cv.turn]!;
  }

  /** The earliest arrival still to come (Infinity when none is pending). */
  nextArrivalMs(): number {
    let t = Infinity;
    for (const cv of this.convs) if (!cv.live && cv.turn < this.turns) t = Math.min(t, cv.arriveAt);
    return t;
  }

  /** Conversations with a turn in flight. */
  live(): Array<{ conversation: number; requestId: string }> {
    return this.convs.flatMap((cv) => (cv.live ? [{ conversation: cv.c, requestId: cv.live.requestId }] : []));
  }

  finished(): boolean {
    return this.convs.every((cv) => cv.turn >= this.turns);
  }
}
