import type { EngineLayerStream, LayerStreamCounters } from '@mnemo/engine';
import { metricBuilders, type ServiceMetrics } from '@mnemo/service-kit';

/** Per model, the layer stream cache's totals since start; read from the engine at scrape time. */
export class LayerStreamMetrics {
  constructor(metrics: ServiceMetrics, models: readonly string[], stream: EngineLayerStream) {
    const { tallyBy } = metricBuilders(metrics.registry);
    const total = (name: string, help: string, pick: (c: LayerStreamCounters) => number) =>
      tallyBy(name, help, ['model'], () => models.map((model) => [{ model }, pick(stream.stats(model))] as const));
    total(
      'mnemo_kv_stream_stall_seconds_total',
      'Time compute waited on a layer whose KV the layer stream cache had not brought in yet (stream stall time)',
      (c) => c.stallSeconds,
    );
    total(
      'mnemo_kv_streamed_sequences_total',
      'Sequences served through the layer stream cache (contexts longer than the device cache)',
      (c) => c.sequences,
    );
    total(
      'mnemo_kv_streamed_bytes_total',
      'KV bytes the layer stream cache moved between its resident layers and their backing blocks',
      (c) => c.bytes,
    );
  }
}
