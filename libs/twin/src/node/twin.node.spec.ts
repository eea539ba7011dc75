import { chunkKeys, CHUNK_TOKENS } from '@mnemo/kv-core';
import { DEFAULT_SIM_COST } from '@mnemo/engine';
import { EventQueue } from '../core/event.queue.js';
import { Distribution } from '../core/distribution.js';
import { SeededRng } from '../core/seeded.rng.js';
import { simCostCompute } from '../costs/compute.port.js';
import { NO_OVERHEADS } from '../costs/overhead.port.js';
import { TwinNode, type TwinNodeConfig, type TwinNodeNet } from './twin.node.js';
import type { TwinRequest, TwinSeq } from './twin-seq.js';

const MODEL = 'mnemo-medium';
const text = (n: number, salt: number) => Array.from({ length: n }, (_, i) => (i * 37 + salt * 101 + 7) % 250);
const free = { dispatchMs: 0, bytesPerMs: Infinity };
const cost = {
  ...DEFAULT_SIM_COST,
  prefillBaseMs: 1,
  prefillPerTokenMs: 0.1,
  decodeBaseMs: 5,
  decodePerSeqMs: 0,
  decodePerKContextMs: 0,
  restorePerChunkMs: 0,
};

function node(over: Partial<TwinNodeConfig> = {}, lag = 0) {
  const events = new EventQueue();
  const first = new Map<string, number>();
  const done = new Map<string, TwinSeq>();
  const beats: Array<{ at: number; waiting: number; prefillBusyMs?: number }> = [];
  const net: TwinNodeNet = {
    events,
    rng: new SeededRng(1),
    peerTiers: () => undefined,
    firstToken: (s, now) => void first.set(s.id, now),
    finished: (s) => void done.set(s.id, s),
    publishKv: () => undefined,
    heartbeat: (_id, load) => void beats.push({ at: events.now, ...load }),
  };
  const config: TwinNodeConfig = {
    id: 'n',
    model: MODEL,
    eosTokenId: 0,
    maxContext: 16384,
    kvBlocks: 256,
    maxBatch: 8,
    maxPrefillTokens: 8192,
    maxWaiting: 256,
    prefixCache: true,
    prefixCacheBlocks: Infinity,
    heartbeatMs: 1000,
    finishBeatMs: 50,
    kvEventsMs: 100,
    layers: 8,
    kvBytesPerToken: 256,
    host: [{ bytes: 16 << 20, bandwidth: 10 }],
    ssd: [],
    ssdTtlMs: 1e9,
    promote: true,
    prefetchTtlMs: 60_000,
    maxAdvisories: 8,
    warm: true,
    ...over,
  };
  const sut = new TwinNode(
    config,
    {
      compute: simCostCompute(cost),
      links: { hostLoad: free, peer: free, ssdRead: free, hostWrite: free, ssdWrite: free },
      overheads: { ...NO_OVERHEADS, timerLagMs: Distribution.constant(lag) },
    },
    net,
  );
  const request = (id: string, tokens: number[], maxTokens = 3, priority = 0): TwinRequest => ({
    id,
    tenant: 't',
    sessionId: id,
    model: MODEL,
    tokens,
    chunkKeys: chunkKeys(MODEL, 't', tokens),
    maxTokens,
    priority,
    kvSources: [],
  });
  return { sut, events, first, done, request, beats };
}

describe(TwinNode.name, () => {
  it('prices a lone request as the sim engine would: prefill, then one decode per further token', () => {
    const { sut, events, first, done, request } = node();
    sut.admit(request('a', text(100, 1)), 0);
    events.run(60_000);
    // Prefill: 1 + 0.1 × 100 ms; then two decodes of 5 ms each.
    expect(first.get('a')).toBeCloseTo(11, 9);
    expect(done.get('a')!.reply).toHaveLength(3);
    expect(done.get('a')!.generated).toBe(3);
  });

  it('adds the measured timer lag to every modelled wait', () => {
    const { sut, events, first, request } = node({}, 2);
    sut.admit(request('a', text(100, 1)), 0);
    events.run(60_000);
    expect(first.get('a')).toBeCloseTo(11 + 2, 9);
  });

  it('batches requests that arrive together into one prefill', () => {
    const { sut, events, first, request } = node();
    sut.admit(request('a', text(100, 1)), 0);
    sut.admit(request('b', text(100, 2)), 0);
    events.run(60_000);
    expect(first.get('a')).toBeCloseTo(1 + 0.1 * 200, 9);
    expect(first.get('b')).toBe(first.get('a'));
  });

  it('a later request waits for the iteration in flight', () => {
    const { sut, events, first, request } = node();
    sut.admit(request('a', text(100, 1), 10), 0);
    events.run(3);
    sut.admit(request('b', text(50, 2)), events.now);
    events.run(60_000);
    // a's prefill ends at 11; b is planned then and prefills before the decode of a: 11 + 1 + 5.
    expect(first.get('b')).toBeCloseTo(11 + 1 + 0.1 * 50, 9);
  });

  it("computes only what the device prefix cache lacks on a session's next turn", () => {
    const { sut, events, first, done, request } = node();
    const t1 = text(2 * CHUNK_TOKENS + 40, 1);
    sut.admit(request('a', t1), 0);
    events.run(60_000);
    const t2 = [...t1, ...done.get('a')!.reply, ...text(20, 9)];
    const at = events.now;
    sut.admit(request('b', t2), at);
    events.run(at + 60_000);
    const cached = done.get('b')!.cachedTokens;
    expect(cached).toBe(Math.floor((t1.length + 2) / 16) * 16);
    expect(first.get('b')! - at).toBeCloseTo(1 + 0.1 * (t2.length - cached), 9);
  });

  it('is deterministic', () => {
    const run = () => {
      const { sut, events, first, request } = node({ kvBlocks: 64 }, 0);
      for (let i = 0; i < 12; i++) sut.admit(request(`r${i}`, text(200 + 13 * i, i), 20), i * 3);
      events.run(60_000);
      return [...first.entries()];
    };
    expect(run()).toEqual(run());
  });

  it('preempts (recompute) when the device runs out of blocks, and still finishes everything', () => {
    const { sut, events, done, request } = node({ kvBlocks: 40 });
    for (let i = 0; i < 4; i++) sut.admit(request(`r${i}`, text(150, i), 60), 0);
    events.run(60_000);
    expect(done.size).toBe(4);
    expect(sut.counters.preemptions).toBeGreaterThan(0);
  });

  it.each<['fcfs' | 'priority', boolean]>([
    ['fcfs', false],
    ['priority', true],
  ])('%s scheduling: a later high-priority request overtakes a running one: %s', (scheduling, overtakes) => {
    const { sut, events, first, done, request } = node({ maxBatch: 1, scheduling });
    sut.admit(request('lo', text(100, 1), 20), 0);
    events.run(12);
    sut.admit(request('hi', text(100, 2), 2, 9), events.now);
    events.run(60_000);
    // lo alone would decode its 19 further tokens in 19 × 5 ms after its first.
    expect(first.get('hi')! < done.get('lo')!.firstTokenAt! + 19 * 5).toBe(overtakes);
  });

  it('reports in its heartbeats the prefill its waiting requests still need, not only the pass in flight', () => {
    // One batch slot: b waits the whole of a's decode, with no prefill running.
    const { sut, events, request, beats } = node({ maxBatch: 1 });
    sut.admit(request('a', text(100, 1), 400), 0);
    events.run(50);
    sut.admit(request('b', text(1024, 2)), events.now);
    events.run(1500);
    const waiting = beats.filter((b) => b.at > 50 && b.waiting === 1);
    expect(waiting.length).toBeGreaterThan(0);
    // Its 1,024 tokens from scratch: 4 chunks at the default price until the node has measured its own.
    for (const b of waiting) expect(b.prefillBusyMs).toBeGreaterThan(0);
    events.run(60_000);
    expect(beats.at(-1)!.prefillBusyMs).toBe(0);
  });

  it('refuses a request its device could never hold, and one past the queue bound', () => {
    const { sut, request } = node({ kvBlocks: 8, maxWaiting: 1 });
    expect(sut.admit(request('big', text(200, 1)), 0)).toBe('prompt_too_long');
    expect(sut.admit(request('a', text(20, 1)), 0)).toBe('admitted');
    expect(sut.admit(request('b', text(20, 2)), 0)).toBe('overloaded');
  });
});
