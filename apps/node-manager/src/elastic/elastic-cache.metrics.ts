import { metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';
import type { CoordinatedElasticCache } from './coordinated-elastic.cache.js';

/** Per model: owned / lent / borrowed blocks and units, role, resize events; read at scrape time. */
export class ElasticCacheMetrics {
  constructor(metrics: ServiceMetrics, cache: CoordinatedElasticCache) {
    const { sampledBy, tally, tallyBy } = metricBuilders(metrics.registry);
    const states = () => cache.models.map((m) => cache.state(m));
    type ModelState = ReturnType<CoordinatedElasticCache['state']>;
    const byState = (pick: (s: ModelState) => readonly [owned: number, lent: number, borrowed: number]) => () =>
      states().flatMap((s) => {
        const [owned, lent, borrowed] = pick(s);
        return [
          [{ model: s.id, state: 'owned' }, owned],
          [{ model: s.id, state: 'lent' }, lent],
          [{ model: s.id, state: 'borrowed' }, borrowed],
        ] as const;
      });
    sampledBy(
      'mnemo_kv_elastic_blocks',
      'Device KV blocks per model on the node budget: owned (its own ' + 'requests may use), lent (to the master), borrowed (from workers)',
      ['model', 'state'],
      byState((s) => [s.ownedBlocks, s.lentBlocks, s.borrowedBlocks]),
    );
    sampledBy(
      'mnemo_kv_elastic_units',
      'The same in minimum elastic units (towards the current master; node units when there is none)',
      ['model', 'state'],
      byState((s) => [s.ownedUnits, s.lentUnits, s.borrowedUnits]),
    );
    sampledBy('mnemo_kv_elastic_master', '1 for the model currently borrowing (the master), 0 for the others', ['model'], () =>
      states().map((s) => [{ model: s.id }, s.role === 'master' ? 1 : 0] as const),
    );
    tallyBy(
      'mnemo_kv_elastic_resize_events_total',
      'Grow or shrink operations of each model’s elastic cache (lend, reclaim)',
      ['model'],
      () => states().map((s) => [{ model: s.id }, s.resizeEvents] as const),
    );
    tally(
      'mnemo_kv_elastic_reclaims_refused_total',
      'Reclaims refused because the master still held the blocks at its end (retried each rebalance)',
      () => cache.counters.reclaimsRefused,
    );
  }
}
