import { create } from '@bufbuild/protobuf';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { ByteTokenizer } from '@mnemo/engine';
import type { MessageInitShape } from '@bufbuild/protobuf';
import { FinishReason, TokenEventSchema, type TokenEvent } from '@mnemo/proto';
import { ServiceMetrics } from '@mnemo/service-kit';
import { EventQueue } from './event.queue.js';
import { InferTimer } from './infer.metrics.js';
import { InferRun, type InferEvent } from './infer.run.js';

const tok = new ByteTokenizer();
const bytes = (s: string) => tok.encode(s);

type EventInit = MessageInitShape<typeof TokenEventSchema>;

function ev(seq: number, tokens: number[], done = false, extra: EventInit = {}): TokenEvent {
  return create(TokenEventSchema, { requestId: 'r', seq, tokens, done, ...extra });
}

function setup(stop: string[] = []) {
  const queue = new EventQueue<TokenEvent>();
  const released: Array<string | undefined> = [];
  const metrics = new ServiceMetrics('gateway-test');
  const timer = new InferTimer(metrics, 'chat.completions');
  timer.model = 'mnemo-tiny';
  const sut = new InferRun('r', 'mnemo-tiny', 1, 7, {
    queue,
    tokenizer: tok,
    timer,
    stop,
    release: (r) => released.push(r),
    stalled: new AbortController().signal,
  });
  return { sut, queue, released, metrics };
}

async function drain(sut: InferRun): Promise<InferEvent[]> {
  const out: InferEvent[] = [];
  for await (const e of sut.events()) out.push(e);
  return out;
}

async function outcomes(metrics: ServiceMetrics): Promise<Record<string, number>> {
  const m = await metrics.requests.get();
  return Object.fromEntries(m.values.map((v) => [String(v.labels.outcome), v.value]));
}

describe(InferRun.name, () => {
  it('detokenizes events into deltas and ends with the node usage', async () => {
    const { sut, queue, released, metrics } = setup();
    queue.push(ev(0, bytes('Hel')));
    queue.push(ev(1, bytes('lo')));
    queue.push(ev(2, [tok.eosTokenId], true, { finishReason: FinishReason.STOP, usage: { promptTokens: 7, completionTokens: 6 } }));
    const events = await drain(sut);
    expect(
      events
        .filter((e) => e.kind === 'delta')
        .map((e) => (e.kind === 'delta' ? e.text : ''))
        .join(''),
    ).toBe('Hello');
    expect(events.at(-1)).toEqual({ kind: 'end', finishReason: 'stop', usage: { promptTokens: 7, completionTokens: 6, cachedTokens: 0 } });
    expect(released).toEqual([undefined]);
    expect(await outcomes(metrics)).toEqual({ ok: 1 });
  });

  it("carries the node's kv_reuse report (first event) into the final usage", async () => {
    const { sut, queue } = setup();
    const kvReuse = { baseModel: 'mnemo-small', r1: 0, u1: 0, r2: 4, recomputedLayers: [0, 1, 2, 3], reusedTokens: 256 };
    queue.push(ev(0, bytes('a'), false, { usage: { promptTokens: 7, cachedTokens: 0, kvReuse } }));
    queue.push(ev(1, [tok.eosTokenId], true, { finishReason: FinishReason.STOP, usage: { promptTokens: 7, completionTokens: 2 } }));
    expect((await drain(sut)).at(-1)).toEqual({
      kind: 'end',
      finishReason: 'stop',
      usage: {
        promptTokens: 7,
        completionTokens: 2,
        cachedTokens: 0,
        kvReuse: { baseModel: 'mnemo-small', pattern: { r1: 0, u1: 0, r2: 4 }, recomputedLayers: [0, 1, 2, 3], reusedTokens: 256 },
      },
    });
  });

  it('never splits a multi-byte character across deltas', async () => {
    const { sut, queue } = setup();
    const euro = bytes('€'); // 3 bytes
    queue.push(ev(0, [euro[0]!]));
    queue.push(ev(1, [euro[1]!]));
    queue.push(ev(2, [euro[2]!], true, { finishReason: FinishReason.LENGTH }));
    const texts = (await drain(sut)).flatMap((e) => (e.kind === 'delta' ? [e.text] : []));
    expect(texts).toEqual(['', '', '€']);
  });

  it('reports length and counts tokens itself when the node sends no usage', async () => {
    const { sut, queue } = setup();
    queue.push(ev(0, bytes('ab'), true, { finishReason: FinishReason.LENGTH }));
    expect((await drain(sut)).at(-1)).toEqual({
      kind: 'end',
      finishReason: 'length',
      usage: { promptTokens: 7, completionTokens: 2, cachedTokens: 0 },
    });
  });

  it('drops duplicate events', async () => {
    const { sut, queue } = setup();
    queue.push(ev(0, bytes('a')));
    queue.push(ev(0, bytes('a')));
    queue.push(ev(1, bytes('b'), true, { finishReason: FinishReason.STOP }));
    const text = (await drain(sut)).map((e) => (e.kind === 'delta' ? e.text : '')).join('');
    expect(text).toBe('ab');
  });

  it('fails clearly on a gap (events lost while NATS was interrupted), cancelling the node, rather than skip tokens', async () => {
    const { sut, queue, released, metrics } = setup();
    queue.push(ev(0, bytes('He')));
    queue.push(ev(3, bytes('lo'), true, { finishReason: FinishReason.LENGTH }));
    const seen: InferEvent[] = [];
    await expect(
      (async () => {
        for await (const e of sut.events()) seen.push(e);
      })(),
    ).rejects.toMatchObject({
      code: ErrorCode.DataLoss,
      message: expect.stringMatching(/^2 token event\(s\) of this request were lost in transit/),
    });
    expect(seen.map((e) => e.kind)).toEqual(['delta']);
    expect(released).toEqual(['gateway_error']);
    expect(await outcomes(metrics)).toEqual({ data_loss: 1 });
  });

  it('ends at a stop string and cancels the node', async () => {
    const { sut, queue, released } = setup(['\n\n']);
    queue.push(ev(0, bytes('one\n')));
    queue.push(ev(1, bytes('\ntwo')));
    const events = await drain(sut);
    expect(events.map((e) => (e.kind === 'delta' ? e.text : '')).join('')).toBe('one');
    expect(events.at(-1)).toMatchObject({ kind: 'end', finishReason: 'stop', usage: { completionTokens: 8 } });
    expect(released).toEqual(['stop_sequence']);
  });

  const failures: Array<[string, EventInit, ErrorCode]> = [
    ['node error with a code', { finishReason: FinishReason.ERROR, error: { code: 'overloaded', message: 'busy' } }, ErrorCode.Overloaded],
    ['node error without a code', { finishReason: FinishReason.ERROR }, ErrorCode.Internal],
    ['node error with an unknown code', { finishReason: FinishReason.ERROR, error: { code: 'weird', message: 'x' } }, ErrorCode.Internal],
    [
      'cancelled by the node on deadline',
      { finishReason: FinishReason.CANCELLED, error: { code: 'timeout', message: 'late' } },
      ErrorCode.Timeout,
    ],
    ['cancelled without a cause', { finishReason: FinishReason.CANCELLED }, ErrorCode.Cancelled],
  ];
  it.each(failures)('throws for %s and does not cancel a finished node request', async (_name, extra, code) => {
    const { sut, queue, released, metrics } = setup();
    queue.push(ev(0, [], true, extra));
    await expect(drain(sut)).rejects.toMatchObject({ code });
    expect(released).toEqual([undefined]);
    expect(await outcomes(metrics)).toEqual({ [code]: 1 });
  });

  it('cancels the node when the gateway gives up (timeout)', async () => {
    const { sut, queue, released } = setup();
    queue.push(ev(0, bytes('a')));
    queue.fail(new MnemoError(ErrorCode.Timeout, 'quiet node'));
    await expect(drain(sut)).rejects.toMatchObject({ code: ErrorCode.Timeout });
    expect(released).toEqual(['timeout']);
  });

  it('cancels the node when the consumer stops reading', async () => {
    const { sut, queue, released, metrics } = setup();
    queue.push(ev(0, bytes('a')));
    for await (const e of sut.events()) {
      expect(e.kind).toBe('delta');
      break;
    }
    expect(released).toEqual(['client_disconnected']);
    expect(await outcomes(metrics)).toEqual({ [ErrorCode.Cancelled]: 1 });
  });
});
