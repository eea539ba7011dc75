import type { TwinSession } from '../workload/session.workload.js';

/** One finished request, as the benchmark records it. */
export interface TwinRequestResult {
  readonly session: string;
  readonly turn: number;
  readonly promptTokens: number;
  readonly ttftMs: number;
  /** Mean time per output token after the first, ms (null for one token). */
  readonly tpotMs: number | null;
  readonly cachedTokens: number;
  readonly outputTokens: number;
  readonly node: string;
}

/** What a request's client hears when it ends. */
export interface InferOutcome {
  readonly ttftMs: number;
  readonly totalMs: number;
  readonly reply: readonly number[];
  readonly cachedTokens: number;
  readonly node: string;
}

/** What a user needs from the cluster: send a request and hear its first token and its end; announce a coming request. */
export interface UserNet {
  readonly now: number;
  at(time: number, fn: () => void): void;
  infer(
    sessionId: string,
    turn: number,
    prompt: readonly number[],
    maxTokens: number,
    done: (r: InferOutcome) => void,
    priority?: number,
  ): void;
  advise(sessionId: string, typeMs: number): void;
  /** The session's last turn is done (what the cluster keeps per session can go). */
  endSession?(sessionId: string): void;
}

export interface UsersOptions {
  readonly users: number;
  /** Users start one after another over this long, ms. */
  readonly rampMs: number;
  readonly maxContext: number;
  readonly advisories: boolean;
  /** Share of advisories not sent, and of turns that also announce a finished session (spurious). */
  readonly missed: number;
  readonly spurious: number;
}

/** The cluster's clients: whatever sends requests (closed-loop users here; open-loop arrivals are part 2's). */
export interface TwinClient {
  start(): void;
  /** Every request this client will send has ended. */
  readonly done: boolean;
  readonly results: readonly TwinRequestResult[];
}

/**
 * Closed-loop users working through the sessions in order (the multi-round benchmark's
 * converse): each turn's prompt is the whole history; between turns the user reads the reply,
 * then types, and — where the system has advisories — announces the request when typing
 * starts. Results are kept in the order requests end.
 */
export class ClosedLoopUsers implements TwinClient {
  readonly results: TwinRequestResult[] = [];
  readonly advisories = { sent: 0, missed: 0, spurious: 0 };
  private next = 0;
  private readonly finished: string[] = [];
  private active = 0;

  constructor(
    private readonly sessions: readonly TwinSession[],
    private readonly o: UsersOptions,
    private readonly net: UserNet,
  ) {}

  /** Schedules every user's start. */
  start(): void {
    for (let u = 0; u < this.o.users; u++) {
      this.active++;
      this.net.at(this.net.now + (u * this.o.rampMs) / this.o.users, () => this.nextSession());
    }
  }

  /** Whether every user ran out of sessions. */
  get done(): boolean {
    return this.active === 0;
  }

  private nextSession(): void {
    const s = this.next++;
    if (s >= this.sessions.length) {
      this.active--;
      return;
    }
    const session = this.sessions[s]!;
    this.turn(session, 0, [...session.system, ...session.doc]);
  }

  private turn(session: TwinSession, t: number, history: readonly number[]): void {
    const turn = session.turns[t];
    const prompt = turn ? [...history, ...turn.user] : [];
    if (!turn || prompt.length + turn.reply >= this.o.maxContext) {
      this.finished.push(session.id);
      this.net.endSession?.(session.id);
      return this.nextSession();
    }
    const send = () => {
      this.net.infer(session.id, t, prompt, turn.reply, (r) => {
        this.results.push({
          session: session.id,
          turn: t,
          promptTokens: prompt.length,
          ttftMs: r.ttftMs,
          tpotMs: r.reply.length > 1 ? (r.totalMs - r.ttftMs) / (r.reply.length - 1) : null,
          cachedTokens: r.cachedTokens,
          outputTokens: r.reply.length,
          node: r.node,
        });
        this.turn(session, t + 1, [...prompt, ...r.reply]);
      });
    };
    if (t === 0) return this.net.at(this.net.now + turn.typeMs, send);
    const typing = this.net.now + session.turns[t - 1]!.readMs;
    this.net.at(typing, () => {
      if (this.o.advisories) {
        // turn.r is drawn once per turn in the workload, so every run misses / adds the same ones.
        if (turn.r < this.o.missed) this.advisories.missed++;
        else {
          this.advisories.sent++;
          this.net.advise(session.id, turn.typeMs);
        }
        if (turn.r >= 1 - this.o.spurious && this.finished.length > 0) {
          // A spurious advisory: a session that has ended "starts typing" and never sends.
          this.advisories.spurious++;
          this.advisories.sent++;
          this.net.advise(this.finished[Math.floor(turn.r * 7919) % this.finished.length]!, turn.typeMs);
        }
      }
      this.net.at(this.net.now + turn.typeMs, send);
    });
  }
}
