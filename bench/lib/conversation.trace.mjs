// A seeded multi-turn trace in time, for benchmarks that drive a node's scheduler directly.
// Conversations start as a Poisson process (exponential gaps); a conversation's next turn
// arrives an exponential think time after its previous reply ended, on the clock of the system
// under test; every turn's prompt is the conversation so far (each earlier prompt's new tokens
// and every reply) plus the user's new tokens. The draws are made up front, so two systems fed
// the same trace see the same conversations, gaps and think times, whatever their speed.
import { exponential, rng } from './figures.mjs';

export class ConversationTrace {
  /**
   * @param {{ conversations: number, turns: number, userTokens: number, meanStartGapMs: number,
   *   meanThinkMs: number, seed: number, vocab?: number }} o
   */
  constructor(o) {
    for (const k of ['conversations', 'turns', 'userTokens'])
      if (!(Number.isInteger(o[k]) && o[k] > 0)) throw new RangeError(`${k} must be a positive integer, got ${o[k]}`);
    for (const k of ['meanStartGapMs', 'meanThinkMs']) if (!(o[k] >= 0)) throw new RangeError(`${k} must be ≥ 0, got ${o[k]}`);
    this.turns = o.turns;
    this.userTokens = o.userTokens;
    this.vocab = o.vocab ?? 250;
    const r = rng(o.seed);
    let start = 0;
    this.convs = Array.from({ length: o.conversations }, (_, c) => {
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
    this.byRequest = new Map();
  }

  /** The user's new tokens of turn `t` of conversation `c` (deterministic, distinct per turn). */
  userTurn(c, t) {
    return Array.from({ length: this.userTokens }, (_, i) => (c * 131 + t * 17 + i * 7 + 3) % this.vocab);
  }

  /**
   * Turns whose arrival time has come by `nowMs` and whose conversation has no turn in flight:
   * each { requestId, conversation, turn, tokens } with a fresh tokens array the caller may hand
   * on (a protobuf message keeps it by reference) without touching the trace's history.
   */
  due(nowMs) {
    const out = [];
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
  replyDone(requestId, replyTokens, nowMs) {
    const cv = this.byRequest.get(requestId);
    if (!cv || cv.live?.requestId !== requestId) throw new Error(`no turn in flight for ${requestId}`);
    this.byRequest.delete(requestId);
    cv.history = [...cv.live.prompt, ...replyTokens];
    cv.live = undefined;
    cv.turn++;
    if (cv.turn < this.turns) cv.arriveAt = nowMs + cv.think[cv.turn];
  }

  /** The earliest arrival still to come (Infinity when none is pending). */
  nextArrivalMs() {
    let t = Infinity;
    for (const cv of this.convs) if (!cv.live && cv.turn < this.turns) t = Math.min(t, cv.arriveAt);
    return t;
  }

  /** Conversations with a turn in flight. */
  live() {
    return this.convs.filter((cv) => cv.live).map((cv) => ({ conversation: cv.c, requestId: cv.live.requestId }));
  }

  finished() {
    return this.convs.every((cv) => cv.turn >= this.turns);
  }
}
