import { create } from '@bufbuild/protobuf';
import { ErrorCode } from '@mnemo/kv-core';
import { SimEngine } from '@mnemo/engine';
import { InferenceRequestSchema, SamplingParamsSchema } from '@mnemo/proto';
import { ServiceMetrics, type Clock } from '@mnemo/service-kit';
import { SequenceStore } from '../batching/sequence.store.js';
import type { NodeManagerConfig } from '../config/node-manager.config.js';
import { AdmitInferenceCommand } from '../inference/admit-inference.command.js';
import { AdmitInferenceUseCase } from '../inference/admit-inference.use-case.js';
import { CancelledAttempts } from '../inference/cancelled-attempts.js';
import { NodeLifecycle } from '../shared/node.lifecycle.js';
import { CoordinatedElasticCache } from './coordinated-elastic.cache.js';
import { ElasticCacheMetrics } from './elastic-cache.metrics.js';
import type { ElasticCachePort } from './elastic-cache.port.js';

// Sim models on 96 KiB (fp16): one node unit (24 KiB) = 3 mnemo-tiny blocks = 1 mnemo-small block.
// Regions: tiny 6 blocks (2 units), small 2 blocks (2 units); tiny may grow to 12, small to 4.
const BUDGET = { deviceBytes: 96 * 1024 };

function setup(elastic: boolean) {
  let now = 0;
  const clock: Clock = { monotonicMs: () => now, unixMs: () => 1_700_000_000_000 };
  const engine = new SimEngine({ models: ['mnemo-tiny', 'mnemo-small'], kvBlocks: BUDGET });
  const store = new SequenceStore();
  const cache = new CoordinatedElasticCache(engine.elasticMembers(), 1000, store, clock);
  const port: ElasticCachePort | undefined = elastic ? cache : undefined;
  const config = { NODE_ID: 'n1', NODE_MAX_WAITING: 16 } as NodeManagerConfig;
  const sut = new AdmitInferenceUseCase(store, engine, config, clock, new NodeLifecycle(), new CancelledAttempts(clock), port);
  let n = 0;
  const admit = (model: string, prompt: number, maxTokens: number) =>
    sut.execute(
      new AdmitInferenceCommand(
        create(InferenceRequestSchema, { requestId: `r${n++}`, model, tokens: new Array(prompt).fill(65), replySubject: '_INBOX.1', sampling: create(SamplingParamsSchema, { temperature: 0, maxTokens }) }),
      ),
    );
  const capacity = (model: string) => engine.kvBudget(model).capacity;
  return { sut, engine, store, cache, admit, capacity, advance: (ms: number) => (now += ms) };
}

describe(CoordinatedElasticCache.name, () => {
  it.each([
    // name, elastic, tiny request (prompt, max_tokens), admitted, tiny capacity after, small capacity after
    ['fits the region: nothing moves', true, 60, 20, true, 6, 2],
    ['needs 8 of 6 blocks: the idle model lends one unit (3 blocks)', true, 100, 20, true, 9, 1],
    ['needs 12: every idle unit, up to the reserve', true, 150, 40, true, 12, 0],
    ['needs 13: more than the whole budget holds — refused, nothing moves', true, 170, 40, false, 6, 2],
    ['without elasticity the region is the limit', false, 100, 20, false, 6, 2],
  ])('a request over its model’s region: %s', (_n, elastic, prompt, maxTokens, admitted, tiny, small) => {
    const { admit, capacity, cache } = setup(elastic);
    if (admitted) expect(admit('mnemo-tiny', prompt, maxTokens)).toBe('n1');
    else expect(() => admit('mnemo-tiny', prompt, maxTokens)).toThrow(expect.objectContaining({ code: ErrorCode.PromptTooLong }));
    expect([capacity('mnemo-tiny'), capacity('mnemo-small')]).toEqual([tiny, small]);
    cache.coordinator.checkInvariant();
  });

  it('a worker takes its lent units back when its own request arrives, and counts its whole region meanwhile', () => {
    const { admit, capacity, cache } = setup(true);
    admit('mnemo-tiny', 150, 40);
    expect(capacity('mnemo-small')).toBe(0);
    // The lender's requests cannot use lent blocks: its cache has none until it reclaims.
    expect(admit('mnemo-small', 20, 10)).toBe('n1');
    expect([capacity('mnemo-tiny'), capacity('mnemo-small')]).toEqual([6, 2]);
    expect(cache.state('mnemo-small')).toMatchObject({ role: 'worker', ownedBlocks: 2, lentBlocks: 0, resizeEvents: 2 });
    cache.coordinator.checkInvariant();
  });

  it('a reclaim the master refuses (its last blocks are held) is retried by rebalance once they are free', () => {
    const { engine, admit, capacity, cache } = setup(true);
    admit('mnemo-tiny', 100, 20);
    const tinyBlocks = engine.elasticMembers().find((m) => m.id === 'mnemo-tiny')!.blocks;
    const held = tinyBlocks.allocate(tinyBlocks.capacity)!;
    admit('mnemo-small', 20, 10);
    expect(cache.counters.reclaimsRefused).toBe(1);
    expect(capacity('mnemo-small')).toBe(1);
    tinyBlocks.release(held);
    cache.rebalance();
    expect(capacity('mnemo-small')).toBe(2);
    cache.coordinator.checkInvariant();
  });

  it('after the window forgets a worker’s burst, rebalance lends its idle units again', () => {
    const { admit, capacity, cache, store, advance } = setup(true);
    admit('mnemo-small', 20, 10);
    for (const s of store.all()) store.remove(s.id);
    admit('mnemo-tiny', 100, 20); // small still remembers needing 2 blocks: nothing lent
    expect(capacity('mnemo-small')).toBe(2);
    advance(1001);
    cache.rebalance();
    expect([capacity('mnemo-tiny'), capacity('mnemo-small')]).toEqual([9, 1]);
  });

  it('exports owned / lent / borrowed blocks and units, the master and resize events', async () => {
    const { admit, cache } = setup(true);
    const metrics = new ServiceMetrics('node-manager');
    new ElasticCacheMetrics(metrics, cache);
    admit('mnemo-tiny', 100, 20);
    const text = await metrics.registry.metrics();
    for (const line of [
      'mnemo_kv_elastic_blocks{model="mnemo-tiny",state="borrowed",service="node-manager"} 3',
      'mnemo_kv_elastic_blocks{model="mnemo-small",state="lent",service="node-manager"} 1',
      'mnemo_kv_elastic_units{model="mnemo-small",state="lent",service="node-manager"} 1',
      'mnemo_kv_elastic_master{model="mnemo-tiny",service="node-manager"} 1',
      'mnemo_kv_elastic_resize_events_total{model="mnemo-small",service="node-manager"} 1',
    ]) expect(text).toContain(line);
  });
});
