import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { HeartbeatSchema, type Heartbeat } from '@mnemo/proto';
import { JsonLogger, ManualClock, ServiceMetrics } from '@mnemo/service-kit';
import type { SchedulerConfig } from '../config/scheduler.config.js';
import { ListClusterModelsUseCase } from '../models/list-cluster-models.use-case.js';
import { SchedulerMetrics } from '../shared/scheduler.metrics.js';
import { NodeRegistry, type MembershipChange } from './node.registry.js';
import { RecordHeartbeatCommand } from './record-heartbeat.command.js';
import { RecordHeartbeatUseCase } from './record-heartbeat.use-case.js';
import { SweepNodesUseCase } from './sweep-nodes.use-case.js';

/** Init-object form of a Heartbeat (nested messages may be plain objects). */
type HeartbeatInit = Exclude<MessageInitShape<typeof HeartbeatSchema>, Heartbeat>;

const hb = (nodeId: string, over: HeartbeatInit = {}): Heartbeat =>
  create(HeartbeatSchema, {
    nodeId,
    models: [{ id: 'mnemo-tiny', engine: 'sim', maxContext: 4096, vocabSize: 261 }],
    running: 1,
    waiting: 2,
    kvUsage: 0.25,
    grpcAddress: '127.0.0.1:7000',
    // The node's clock is far off on purpose: liveness must not depend on it.
    sentUnixMs: 1,
    accepting: true,
    ...over,
  });

function setup(timeoutMs = 3000) {
  const clock = new ManualClock(1_000);
  const registry = new NodeRegistry();
  const metrics = new SchedulerMetrics(new ServiceMetrics('scheduler-test'));
  const logger = new JsonLogger('test', 'error', () => undefined);
  const record = new RecordHeartbeatUseCase(registry, clock, metrics, logger);
  const sweep = new SweepNodesUseCase(registry, clock, { SCHEDULER_NODE_TIMEOUT_MS: timeoutMs } as SchedulerConfig, metrics, logger);
  const beat = (h: Heartbeat) => record.execute(new RecordHeartbeatCommand(h));
  return { clock, registry, record, sweep, beat, metrics, models: new ListClusterModelsUseCase(registry) };
}

describe(RecordHeartbeatUseCase.name, () => {
  it('registers a node with its load, stamped with the scheduler clock', () => {
    const { registry, beat } = setup();
    beat(hb('n1'));
    expect(registry.get('n1')).toMatchObject({
      nodeId: 'n1',
      models: ['mnemo-tiny'],
      running: 1,
      waiting: 2,
      kvUsage: 0.25,
      lastSeenMs: 1_000,
      grpcAddress: '127.0.0.1:7000',
    });
  });

  it('refreshes load and liveness on every beat', () => {
    const { registry, beat, clock } = setup();
    beat(hb('n1'));
    clock.mono = 2_500;
    beat(hb('n1', { running: 7 }));
    expect(registry.get('n1')).toMatchObject({ running: 7, lastSeenMs: 2_500 });
    expect(registry.size).toBe(1);
  });

  it.each<[string, HeartbeatInit['costs'], object | undefined]>([
    ['no costs reported: none kept', undefined, undefined],
    ['nothing measured yet: an empty report', { passes: 0 }, {}],
    [
      'measured figures, tiers together',
      { recomputeMsPerChunk: 20, hostMsPerChunk: 1.5, ssdMsPerChunk: 6, peerMsPerChunk: 3, slotMs: 50, passes: 40 },
      { recomputeMsPerChunk: 20, loadMsPerChunk: { host: 1.5, ssd: 6 }, peerMsPerChunk: 3, slotMs: 50 },
    ],
    [
      'a figure routing cannot use is left out',
      { recomputeMsPerChunk: -1, peerMsPerChunk: Infinity, hostMsPerChunk: 2 },
      { loadMsPerChunk: { host: 2 } },
    ],
  ])('keeps the costs a node measured of itself: %s', (_name, costs, kept) => {
    const { registry, beat } = setup();
    beat(hb('n1', costs ? { costs } : {}));
    expect(registry.get('n1')?.costs).toEqual(kept);
    // SCHEDULER_MEASURED_COSTS=off: routing sees no node's own figures.
    expect(registry.routable(false)[0]).not.toHaveProperty('costs');
  });

  it('keeps the batch size a node reports (0: not reported)', () => {
    const { registry, beat } = setup();
    beat(hb('n1', { maxBatch: 16 }));
    beat(hb('n2'));
    expect([registry.get('n1')?.maxBatch, registry.get('n2')?.maxBatch]).toEqual([16, undefined]);
  });

  it.each<[string, number, number]>([
    ['a pass in flight', 1200, 1200],
    ['none (0)', 0, 0],
    ['nonsense reads as none', -5, 0],
    ['bounded', 1e12, 600_000],
  ])('keeps the prefill a node reports in flight: %s', (_name, sent, kept) => {
    const { registry, beat } = setup();
    beat(hb('n1', { prefillBusyMs: 900 }));
    // Each heartbeat replaces the last one's figure: an old pass never lingers.
    beat(hb('n1', { prefillBusyMs: sent }));
    expect(registry.get('n1')?.prefillBusyMs).toBe(kept);
  });

  it('removes a node that says goodbye (accepting = false)', () => {
    const { registry, beat } = setup();
    beat(hb('n1'));
    beat(hb('n1', { accepting: false }));
    expect(registry.get('n1')).toBeUndefined();
  });

  it('reads another boot id as a restart: the old incarnation leaves as down, the new one joins', () => {
    const { registry, beat, metrics } = setup();
    const changes: MembershipChange[] = [];
    registry.onMembership((c) => changes.push(c));
    beat(hb('n1', { bootId: 'b1' }));
    beat(hb('n1', { bootId: 'b1', running: 3 }));
    beat(hb('n1', { bootId: 'b2', running: 0 }));
    expect(changes).toEqual([
      { kind: 'joined', nodeId: 'n1' },
      { kind: 'left', nodeId: 'n1', reason: 'restarted', bootId: 'b1' },
      { kind: 'joined', nodeId: 'n1' },
    ]);
    expect(registry.get('n1')).toMatchObject({ bootId: 'b2', running: 0 });
    return expect(metrics.nodesDropped.get()).resolves.toMatchObject({ values: [{ labels: { reason: 'restarted' }, value: 1 }] });
  });

  it.each<[string, Partial<HeartbeatInit>, MembershipChange | undefined]>([
    [
      'a goodbye leaves without a down',
      { bootId: 'b1', accepting: false },
      { kind: 'left', nodeId: 'n1', reason: 'goodbye', bootId: 'b1' },
    ],
    ['a beat of the same incarnation changes nothing', { bootId: 'b1' }, undefined],
  ])('%s', (_n, over, change) => {
    const { registry, beat } = setup();
    beat(hb('n1', { bootId: 'b1' }));
    const changes: MembershipChange[] = [];
    registry.onMembership((c) => changes.push(c));
    beat(hb('n1', over));
    expect(changes).toEqual(change ? [change] : []);
  });

  it('ignores a node id that cannot be a subject token', () => {
    const { registry, beat } = setup();
    beat(hb('bad.id'));
    expect(registry.size).toBe(0);
  });
});

describe(SweepNodesUseCase.name, () => {
  it.each<[string, number, string[]]>([
    ['still alive just before the timeout', 3_999, []],
    ['alive exactly at the timeout', 4_000, []],
    ['dropped just after it', 4_001, ['n1']],
  ])('%s', (_n, now, dropped) => {
    const { sweep, beat, clock, registry } = setup(3000);
    beat(hb('n1'));
    clock.mono = now;
    expect(sweep.execute()).toEqual(dropped);
    expect(registry.size).toBe(1 - dropped.length);
  });

  it('drops a silent node as down, naming the incarnation that went silent', () => {
    const { sweep, beat, clock, registry } = setup(1500);
    const changes: MembershipChange[] = [];
    registry.onMembership((c) => changes.push(c));
    beat(hb('n1', { bootId: 'b1' }));
    clock.mono += 1501;
    sweep.execute();
    expect(changes.at(-1)).toEqual({ kind: 'left', nodeId: 'n1', reason: 'timeout', bootId: 'b1' });
  });

  it('keeps a node that keeps beating and drops the one that stopped', () => {
    const { sweep, beat, clock, registry } = setup(1000);
    beat(hb('alive'));
    beat(hb('dead'));
    for (let t = 1_500; t <= 4_000; t += 500) {
      clock.mono = t;
      beat(hb('alive'));
      sweep.execute();
    }
    expect(registry.all().map((n) => n.nodeId)).toEqual(['alive']);
  });

  it('feeds the live-node gauge', async () => {
    const { beat, metrics, registry, sweep, clock } = setup(1000);
    metrics.observeLiveNodes(() => registry.size);
    beat(hb('n1'));
    beat(hb('n2'));
    expect((await metrics.liveNodes.get()).values[0].value).toBe(2);
    clock.mono += 2000;
    sweep.execute();
    expect((await metrics.liveNodes.get()).values[0].value).toBe(0);
  });
});

describe(ListClusterModelsUseCase.name, () => {
  it('lists each served model once, sorted', () => {
    const { beat, models } = setup();
    const info = (id: string) => ({ id, engine: 'sim', maxContext: 4096, vocabSize: 261 });
    beat(hb('n2', { models: [info('mnemo-tiny'), info('b-model')] }));
    beat(hb('n1', { models: [info('mnemo-tiny')] }));
    expect(models.execute().map((m) => m.id)).toEqual(['b-model', 'mnemo-tiny']);
  });

  it('passes on how to get each model’s tokenizer', () => {
    const { beat, models } = setup();
    const sha = 'ab'.repeat(32);
    beat(
      hb('n1', {
        models: [{ id: 'qwen', engine: 'reference', maxContext: 32768, vocabSize: 151_936, tokenizer: 'bpe', tokenizerSha256: sha }],
      }),
    );
    expect(models.execute()).toEqual([
      { id: 'qwen', engine: 'reference', maxContext: 32768, vocabSize: 151_936, tokenizer: 'bpe', tokenizerSha256: sha },
    ]);
  });

  it('is empty without nodes', () => {
    expect(setup().models.execute()).toEqual([]);
  });
});
