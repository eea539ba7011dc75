/** One user turn of a session, as the multi-round benchmark's workload draws it. */
export interface TwinTurn {
  /** Token ids the user sends (typed and pasted). */
  readonly user: readonly number[];
  /** Reply length asked for (max_tokens). */
  readonly reply: number;
  /** Reading the reply to this turn before the next one starts, ms. */
  readonly readMs: number;
  /** Typing this turn, ms (the advisory goes out when typing starts). */
  readonly typeMs: number;
  /** A draw in [0, 1) fixed per turn: which advisories a variant misses or adds. */
  readonly r: number;
}

/** A multi-turn session: a system prompt, an optional pasted document, then the turns. */
export interface TwinSession {
  readonly id: string;
  readonly system: readonly number[];
  readonly doc: readonly number[];
  readonly turns: readonly TwinTurn[];
}
