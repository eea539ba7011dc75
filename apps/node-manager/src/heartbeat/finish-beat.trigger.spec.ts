import { jest } from '@jest/globals';
import { create } from '@bufbuild/protobuf';
import { InferenceRequestSchema } from '@mnemo/proto';
import type { Clock } from '@mnemo/service-kit';
import { Sequence } from '../shared/sequence.js';
import { SequenceStore } from '../batching/sequence.store.js';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { FinishBeatTrigger } from './finish-beat.trigger.js';
import type { PublishHeartbeatUseCase } from './publish-heartbeat.use-case.js';

const model = { id: 'm', engine: 'sim' as const, vocabSize: 300, maxContext: 4096, eosTokenId: 2 };
const clock: Clock = { monotonicMs: () => Date.now(), unixMs: () => Date.now() };

function setup(periodMs: number) {
  const store = new SequenceStore();
  const beats: Array<{ atMs: number; running: number }> = [];
  // Port double: what each beat would report.
  const publish = { execute: () => beats.push({ atMs: Date.now(), running: store.size }) } as unknown as PublishHeartbeatUseCase;
  const sut = new FinishBeatTrigger(publish, store, { NODE_FINISH_BEAT_MS: periodMs } as NodeManagerConfig, clock);
  sut.onModuleInit();
  let n = 0;
  const add = () => {
    const id = `r${n++}`;
    store.add(
      new Sequence(
        create(InferenceRequestSchema, { requestId: id, model: 'm', tokens: [1, 2], replySubject: '_INBOX.x' }),
        model,
        store.arrivalSeq(),
        0,
      ),
    );
    return id;
  };
  return { sut, store, beats, add };
}

describe(FinishBeatTrigger.name, () => {
  beforeEach(() => jest.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => jest.useRealTimers());

  it('beats as a request leaves, already without it, and at most once per period after that', () => {
    const { store, beats, add } = setup(50);
    const [a, b, c, d] = [add(), add(), add(), add()];
    store.remove(a);
    expect(beats).toEqual([{ atMs: 1_000_000, running: 3 }]);
    jest.advanceTimersByTime(10);
    store.remove(b);
    store.remove(c);
    expect(beats).toHaveLength(1);
    // The two removals inside the period share one beat at its end, which sees both gone.
    jest.advanceTimersByTime(40);
    expect(beats).toEqual([
      { atMs: 1_000_000, running: 3 },
      { atMs: 1_000_050, running: 1 },
    ]);
    jest.advanceTimersByTime(1000);
    store.remove(d);
    expect(beats.at(-1)).toEqual({ atMs: 1_001_050, running: 0 });
    expect(beats).toHaveLength(3);
  });

  it('a removal of an unknown id is no change: no beat', () => {
    const { store, beats } = setup(50);
    store.remove('nobody');
    expect(beats).toEqual([]);
  });

  it('0 turns it off: periodic heartbeats only', () => {
    const { store, beats, add } = setup(0);
    store.remove(add());
    jest.advanceTimersByTime(1000);
    expect(beats).toEqual([]);
  });

  it('a beat still pending at shutdown is dropped', () => {
    const { sut, store, beats, add } = setup(50);
    const [a, b] = [add(), add()];
    store.remove(a);
    store.remove(b);
    sut.onApplicationShutdown();
    jest.advanceTimersByTime(100);
    expect(beats).toHaveLength(1);
  });
});
