import { Counter, Gauge } from 'prom-client';
import type { ServiceMetrics } from '@mnemo/service-kit';
import type { CoordinatedElasticCache } from './coordinated-elastic.cache.js';

/** Per model: owned / lent / borrowed blocks and units, role, resize events; read at scrape time. */
export class ElasticCacheMetrics {
  constructor(metrics: ServiceMetrics, cache: CoordinatedElasticCache) {
    const registers = [metrics.registry];
    const states = () => cache.models.map((m) => cache.state(m));
    new Gauge({
      name: 'mnemo_kv_elastic_blocks',
      help:
        'Device KV blocks per model on the node budget: owned (its own ' +
        'requests may use), lent (to the master), borrowed (from workers)',
      labelNames: ['model', 'state'],
      registers,
      collect() {
        for (const s of states()) {
          this.set({ model: s.id, state: 'owned' }, s.ownedBlocks);
          this.set({ model: s.id, state: 'lent' }, s.lentBlocks);
          this.set({ model: s.id, state: 'borrowed' }, s.borrowedBlocks);
        }
      },
    });
    new Gauge({
      name: 'mnemo_kv_elastic_units',
      help: 'The same in minimum elastic units (towards the current master; node units when there is none)',
      labelNames: ['model', 'state'],
      registers,
      collect() {
        for (const s of states()) {
          this.set({ model: s.id, state: 'owned' }, s.ownedUnits);
          this.set({ model: s.id, state: 'lent' }, s.lentUnits);
          this.set({ model: s.id, state: 'borrowed' }, s.borrowedUnits);
        }
      },
    });
    new Gauge({
      name: 'mnemo_kv_elastic_master',
      help: '1 for the model currently borrowing (the master), 0 for the others',
      labelNames: ['model'],
      registers,
      collect() {
        for (const s of states()) this.set({ model: s.id }, s.role === 'master' ? 1 : 0);
      },
    });
    new Counter({
      name: 'mnemo_kv_elastic_resize_events_total',
      help: 'Grow or shrink operations of each model’s elastic cache (lend, reclaim)',
      labelNames: ['model'],
      registers,
      collect() {
        this.reset();
        for (const s of states()) this.inc({ model: s.id }, s.resizeEvents);
      },
    });
    new Counter({
      name: 'mnemo_kv_elastic_reclaims_refused_total',
      help: 'Reclaims refused because the master still held the blocks at its end (retried each rebalance)',
      registers,
      collect() {
        this.reset();
        this.inc(cache.counters.reclaimsRefused);
      },
    });
  }
}
