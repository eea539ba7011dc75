import { create } from '@bufbuild/protobuf';
import { FinishReason, TokenEventSchema, type TokenEvent } from '@mnemo/proto';
import { AttemptGate } from './attempt.gate.js';

const ev = (nodeId: string, attempt: number, seq: number, done = false): TokenEvent =>
  create(TokenEventSchema, {
    requestId: 'r',
    nodeId,
    attempt,
    seq,
    tokens: done ? [] : [65 + seq],
    done,
    finishReason: done ? FinishReason.CANCELLED : FinishReason.UNSPECIFIED,
  });

describe(AttemptGate.name, () => {
  it('holds the placed attempt’s early events and delivers them in order once it is known', () => {
    const sut = new AttemptGate(16);
    expect(sut.offer(ev('b', 2, 0))).toMatchObject({ kind: 'held', held: 1 });
    expect(sut.offer(ev('b', 2, 1))).toMatchObject({ kind: 'held', held: 2 });
    const { deliver, strays } = sut.bind({ nodeId: 'b', attempt: 2 });
    expect(deliver.map((e) => e.seq)).toEqual([0, 1]);
    expect(strays).toEqual([]);
  });

  it('drops a lower attempt as soon as a higher one is heard: the scheduler gave up on it', () => {
    const sut = new AttemptGate(16);
    sut.offer(ev('a', 1, 0));
    sut.offer(ev('a', 1, 1));
    expect(sut.offer(ev('b', 2, 0))).toEqual({
      kind: 'held',
      from: { nodeId: 'b', attempt: 2 },
      held: 1,
      cancel: { nodeId: 'a', attempt: 1 },
    });
    expect(sut.offer(ev('a', 1, 2))).toEqual({ kind: 'stray' });
    expect(sut.bind({ nodeId: 'b', attempt: 2 })).toEqual({ deliver: [expect.objectContaining({ nodeId: 'b', seq: 0 })], strays: [] });
  });

  it('reports the held attempt when the placement is another one', () => {
    const sut = new AttemptGate(16);
    sut.offer(ev('a', 1, 0));
    expect(sut.bind({ nodeId: 'b', attempt: 2 })).toEqual({ deliver: [], strays: [{ nodeId: 'a', attempt: 1 }] });
    expect(sut.offer(ev('a', 1, 1))).toEqual({ kind: 'stray' });
  });

  it('drops a late attempt’s events after the placement, its final CANCELLED included, reporting it once', () => {
    const sut = new AttemptGate(16);
    sut.bind({ nodeId: 'b', attempt: 2 });
    expect(sut.offer(ev('a', 1, 0))).toEqual({ kind: 'stray', cancel: { nodeId: 'a', attempt: 1 } });
    expect(sut.offer(ev('a', 1, 1))).toEqual({ kind: 'stray' });
    expect(sut.offer(ev('a', 1, 2, true))).toEqual({ kind: 'stray' });
    expect(sut.offer(ev('b', 2, 0))).toMatchObject({ kind: 'deliver', event: expect.objectContaining({ seq: 0 }) });
  });

  it('tells the same attempt number on another node apart', () => {
    const sut = new AttemptGate(16);
    sut.bind({ nodeId: 'b', attempt: 1 });
    expect(sut.offer(ev('a', 1, 0)).kind).toBe('stray');
  });

  it('overflows instead of holding without bound', () => {
    const sut = new AttemptGate(2);
    sut.offer(ev('a', 1, 0));
    sut.offer(ev('a', 1, 1));
    expect(sut.offer(ev('a', 1, 2)).kind).toBe('overflow');
  });

  it('after a failover, drops the lost attempt and those before it, and holds the continuation’s until it is placed', () => {
    const sut = new AttemptGate(16);
    sut.bind({ nodeId: 'a', attempt: 1 });
    expect(sut.offer(ev('a', 1, 0))).toMatchObject({ kind: 'deliver' });
    sut.reopen({ nodeId: 'a', attempt: 1 });
    // A late event of the lost attempt: dropped, and not reported again (the caller cancelled it).
    expect(sut.offer(ev('a', 1, 1))).toEqual({ kind: 'stray' });
    expect(sut.offer(ev('c', 2, 0))).toMatchObject({ kind: 'held', held: 1 });
    expect(sut.bind({ nodeId: 'c', attempt: 2 })).toEqual({ deliver: [expect.objectContaining({ nodeId: 'c', seq: 0 })], strays: [] });
    expect(sut.offer(ev('c', 2, 1))).toMatchObject({ kind: 'deliver' });
  });
});
