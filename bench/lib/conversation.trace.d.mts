export interface DueTurn {
  requestId: string;
  conversation: number;
  turn: number;
  arrivedAtMs: number;
  tokens: number[];
}
export class ConversationTrace {
  constructor(o: {
    conversations: number;
    turns: number;
    userTokens: number;
    meanStartGapMs: number;
    meanThinkMs: number;
    seed: number;
    vocab?: number;
  });
  readonly turns: number;
  userTurn(c: number, t: number): number[];
  due(nowMs: number): DueTurn[];
  replyDone(requestId: string, replyTokens: readonly number[], nowMs: number): void;
  nextArrivalMs(): number;
  live(): Array<{ conversation: number; requestId: string }>;
  finished(): boolean;
}
