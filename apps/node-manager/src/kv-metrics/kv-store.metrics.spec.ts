// The SSD backend is never silent: /metrics names every SSD pool device's I/O backend, so a node
// on the pread/pwrite fallback shows up in a dashboard beside its io_uring peers.
import { ServiceMetrics } from '@mnemo/service-kit';
import { KvStoreMetrics } from './kv-store.metrics.js';
import type { KvEventsPublisher } from '../kv-events/kv-events.publisher.js';
import type { KvStore } from '../kv-store/kv.store.js';

/** A store whose SSD pool devices run `backends` (only what the gauge reads). */
const storeWith = (backends: readonly string[]): KvStore =>
  ({
    tiers: { counters: {}, ssd: backends.map((backend) => ({ device: { backend } })) },
    counters: {},
  }) as unknown as KvStore;

describe(KvStoreMetrics.name, () => {
  it.each([
    ['io_uring on every device', ['io_uring', 'io_uring'], { io_uring: 2 }],
    ['one device on the fallback', ['io_uring', 'pread'], { io_uring: 1, pread: 1 }],
    ['no SSD pool', [], {}],
  ])('mnemo_kv_ssd_backend counts SSD pool devices per backend: %s', async (_name, backends, want) => {
    const metrics = new ServiceMetrics('node-manager');
    new KvStoreMetrics(metrics, storeWith(backends), { published: 0 } as KvEventsPublisher);
    const sut = await metrics.registry.getSingleMetric('mnemo_kv_ssd_backend')!.get();
    expect(Object.fromEntries(sut.values.map((v) => [v.labels.backend, v.value]))).toEqual(want);
  });
});
