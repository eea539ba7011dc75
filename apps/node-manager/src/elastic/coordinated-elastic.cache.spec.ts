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
import { CoordinatedElasticCache, type RecentSessionsOptions } from './coordinated-elastic.cache.js';
import { ElasticCacheMetrics } from './elastic-cache.metrics.js';
import type { ElasticCachePort } from './elastic-cache.port.js';

// Sim models on 96 KiB (fp16): one node unit (24 KiB) = 3 mnemo-tiny blocks = 1 mnemo-small block.
// Regions: tiny 6 blocks (2 units), small 2 blocks (2 units); tiny may grow to 12, small to 4.
const BUDGET = { deviceBytes: 96 * 1024 };

function setup(elastic: boolean, recent: RecentSessionsOptions = { windowMs: 1000 }) {
  let now = 0;
  const clock: Clock = { monotonicMs: () => now, unixMs: () => 1_700_000_000_000 };
  const engine = new SimEngine({ models: ['mnemo-tiny', 'mnemo-small'], kvBlocks: BUDGET });
  const store = new SequenceStore();
  const cache = new CoordinatedElasticCache(engine.elasticMembers(), 1000, store, clock, recent);
  const port: ElasticCachePort | undefined = elastic ? cache : undefined;
  const config = { NODE_ID: 'n1', NODE_MAX_WAITING: 16 } as NodeManagerConfig;
  const sut = new AdmitInferenceUseCase(store, engine, config, clock, new NodeLifecycle(), new CancelledAttempts(clock), port);
  let n = 0;
  const admit = (model: string, prompt: number, maxTokens: number, sessionId = '') =>
    sut.execute(
      new AdmitInferenceCommand(
        create(InferenceRequestSchema, {
          requestId: `r${n++}`,
          tenant: 't',
          sessionId,
          model,
          tokens: new Array(prompt).fill(65),
          replySubject: '_INBOX.1',
          sampling: create(SamplingParamsSchema, { temperature: 0, maxTokens }),
        }),
      ),
    );
  /** Every live request finishes, each having generated `generated` tokens (0: it never ran). */
  const finishAll = (generated: number) => {
    for (const s of store.all()) {
      if (generated > 0) [s.generated, s.firstTokenMs] = [generated, now];
      store.remove(s.id);
    }
  };
  const capacity = (model: string) => engine.kvBudget(model).capacity;
  return { sut, engine, store, cache, admit, finishAll, capacity, advance: (ms: number) => (now += ms) };
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

  // Session "a" is served first (prompt 60 + 19 generated: 79 tokens, 5 blocks held), then a
  // request of 3 blocks (40 + 8 max_tokens) arrives. Live alone it fits tiny's 6-block region.
  it.each([
    // name, recent-session options, "a" generated, ms until the next request, its session, tiny / small capacity after
    ['a session served just now counts: 5 + 3 blocks exceed 6, one unit lent', { windowMs: 1000 }, 19, 0, 'b', 9, 1],
    ['still inside the window', { windowMs: 1000 }, 19, 999, 'b', 9, 1],
    ['a window later it has expired: the live request alone fits', { windowMs: 1000 }, 19, 1000, 'b', 6, 2],
    ['its own next turn counts once, as live', { windowMs: 1000 }, 19, 0, 'a', 6, 2],
    ['a request that never ran held nothing', { windowMs: 1000 }, 0, 0, 'b', 6, 2],
    ['capped by what the prefix cache keeps (2 blocks)', { windowMs: 1000, capTokens: 32 }, 19, 0, 'b', 6, 2],
    ['window 0: live requests alone (the earlier rule)', { windowMs: 0 }, 19, 0, 'b', 6, 2],
  ] as Array<[string, RecentSessionsOptions, number, number, string, number, number]>)(
    'a recently served session is demand: %s',
    (_n, recent, generated, gapMs, session, tiny, small) => {
      const { admit, finishAll, capacity, cache, advance } = setup(true, recent);
      admit('mnemo-tiny', 60, 20, 'a');
      finishAll(generated);
      // The coordinator's own window (1000 ms) would still remember "a"'s live 5 blocks: not enough alone.
      advance(gapMs);
      admit('mnemo-tiny', 40, 8, session);
      expect([capacity('mnemo-tiny'), capacity('mnemo-small')]).toEqual([tiny, small]);
      cache.coordinator.checkInvariant();
    },
  );

  // Small needs its whole region at 0 (its window keeps it until 1000); at 500 tiny serves session
  // "a" (5 blocks held), then "b" (2 blocks live; 2 held): never more than 5 blocks live at once.
  it.each([
    // name, recent-session options, ms after 500 of the rebalance, tiny / small capacity after it
    ['once the worker’s window has passed, their 5 + 2 blocks exceed the region: one unit lent', { windowMs: 1000 }, 500, 9, 1],
    ['a window after they were served they are not demand', { windowMs: 1000 }, 1000, 6, 2],
    ['the live-only rule: the largest live demand (5 blocks) fits', { windowMs: 0 }, 500, 6, 2],
  ] as Array<[string, RecentSessionsOptions, number, number, number]>)(
    'the periodic rebalance counts recent sessions: %s',
    (_n, recent, gapMs, tiny, small) => {
      const { admit, finishAll, capacity, cache, advance } = setup(true, recent);
      admit('mnemo-small', 20, 10);
      finishAll(0);
      advance(500);
      admit('mnemo-tiny', 60, 20, 'a');
      finishAll(19);
      admit('mnemo-tiny', 20, 8, 'b');
      finishAll(7);
      expect([capacity('mnemo-tiny'), capacity('mnemo-small')]).toEqual([6, 2]);
      advance(gapMs);
      cache.rebalance();
      expect([capacity('mnemo-tiny'), capacity('mnemo-small')]).toEqual([tiny, small]);
      cache.coordinator.checkInvariant();
    },
  );

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
    ])
      expect(text).toContain(line);
  });
});
