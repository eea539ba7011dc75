import { create } from '@bufbuild/protobuf';
import { InferenceRequestSchema } from '@mnemo/proto';
import { ConversationTrace } from './conversation.trace.js';

const opts = { conversations: 3, turns: 3, userTokens: 4, meanStartGapMs: 10, meanThinkMs: 5, seed: 7 };
const reply = (requestId: string) => [900, 901, requestId.length];

describe(ConversationTrace.name, () => {
  it("a turn's prompt is the previous prompt plus its reply plus the user's new tokens, through protobuf requests", () => {
    const sut = new ConversationTrace(opts);
    const prompts = new Map<string, number[]>();
    let now = 0;
    while (!sut.finished()) {
      for (const d of sut.due(now)) {
        // As the bench does: the request keeps the array it is given (protobuf-es keeps lists by reference).
        const request = create(InferenceRequestSchema, { requestId: d.requestId, tokens: d.tokens });
        prompts.set(d.requestId, [...request.tokens]);
        request.tokens.push(-1); // a consumer touching the request must not reach the trace
        sut.replyDone(d.requestId, reply(d.requestId), now);
      }
      now = Math.max(now + 1, sut.nextArrivalMs());
    }
    for (let c = 0; c < opts.conversations; c++) {
      expect(prompts.get(`c${c}t0`)).toEqual(sut.userTurn(c, 0));
      for (let t = 1; t < opts.turns; t++) {
        const previous = `c${c}t${t - 1}`;
        expect(prompts.get(`c${c}t${t}`)).toEqual([...prompts.get(previous)!, ...reply(previous), ...sut.userTurn(c, t)]);
      }
    }
  });

  it('conversations start in time order; a next turn arrives a think time after its reply, not before', () => {
    const sut = new ConversationTrace({ ...opts, conversations: 5 });
    const first = sut.due(Infinity);
    const starts = first.map((d) => d.arrivedAtMs);
    expect(starts[0]).toBe(0);
    expect([...starts].sort((a, b) => a - b)).toEqual(starts);
    expect(sut.due(Infinity)).toEqual([]); // every conversation has a turn in flight
    sut.replyDone(first[0]!.requestId, [1], 100);
    const next = sut.nextArrivalMs();
    expect(next).toBeGreaterThanOrEqual(100);
    expect(sut.due(next - 1e-9)).toEqual([]);
    expect(sut.due(next).map((d) => d.requestId)).toEqual(['c0t1']);
  });

  it('is seeded: the same seed gives the same trace, another seed another', () => {
    const starts = (seed: number) => new ConversationTrace({ ...opts, conversations: 6, seed }).due(Infinity).map((d) => d.arrivedAtMs);
    expect(starts(3)).toEqual(starts(3));
    expect(starts(3)).not.toEqual(starts(4));
  });

  it('starts conversations as a Poisson process of the given mean gap', () => {
    const sut = new ConversationTrace({ ...opts, conversations: 4001, meanStartGapMs: 10 });
    const last = sut.due(Infinity).at(-1)!.arrivedAtMs;
    expect(last / 4000).toBeGreaterThan(9.5);
    expect(last / 4000).toBeLessThan(10.5);
  });

  it('refuses a reply for a turn not in flight, and bad options', () => {
    const sut = new ConversationTrace(opts);
    expect(() => sut.replyDone('c0t0', [], 0)).toThrow(/no turn in flight/);
    expect(() => new ConversationTrace({ ...opts, turns: 0 })).toThrow(RangeError);
    expect(() => new ConversationTrace({ ...opts, meanThinkMs: -1 })).toThrow(RangeError);
  });
});
