import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { Counter } from 'prom-client';
import type { KvDirectory } from '@mnemo/kv-core';
import { JsonLogger, ServiceMetrics, VllmEventsSubscriber } from '@mnemo/service-kit';
import { SCHEDULER_CONFIG, type SchedulerConfig } from '../config/scheduler.config.js';
import { KV_DIRECTORY } from '../kv-directory/kv-report.port.js';
import { RecordVllmBatchUseCase } from './record-vllm-batch.use-case.js';
import { parseVllmSources } from './vllm-sources.parser.js';

/** Subscribes to every SCHEDULER_VLLM_SOURCES engine and feeds its events to the directory. */
@Injectable()
export class VllmSourcesService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly subscribers: VllmEventsSubscriber[] = [];
  private readonly events: Counter<'source' | 'outcome'>;

  constructor(
    @Inject(SCHEDULER_CONFIG) private readonly config: SchedulerConfig,
    @Inject(KV_DIRECTORY) private readonly directory: KvDirectory,
    @Inject(JsonLogger) private readonly logger: JsonLogger,
    @Inject(ServiceMetrics) metrics: ServiceMetrics,
  ) {
    this.events = new Counter({
      name: 'mnemo_scheduler_vllm_events_total',
      help: "External engines' vLLM-format KV events, by source and what became of them (stored, removed, cleared, or why one was refused)",
      labelNames: ['source', 'outcome'],
      registers: [metrics.registry],
    });
  }

  async onApplicationBootstrap(): Promise<void> {
    for (const source of parseVllmSources(this.config.SCHEDULER_VLLM_SOURCES ?? '').sources) {
      const record = new RecordVllmBatchUseCase(source, this.config.SCHEDULER_VLLM_TENANT!, this.directory, (outcome) =>
        this.events.inc({ source: source.id, outcome }),
      );
      this.subscribers.push(
        await VllmEventsSubscriber.connect({
          endpoint: source.endpoint,
          ...(source.replayEndpoint ? { replayEndpoint: source.replayEndpoint } : {}),
          onBatch: (batch) => record.execute(batch),
          onRestart: () => record.restarted(),
          onError: (e) => {
            this.events.inc({ source: source.id, outcome: 'malformed' });
            this.logger.emit('warn', 'vLLM KV event stream problem', { source: source.id, err: String(e) });
          },
        }),
      );
      this.logger.emit('info', 'consuming vLLM-format KV events', { source: source.id, model: source.model, endpoint: source.endpoint });
    }
  }

  onModuleDestroy(): void {
    for (const s of this.subscribers.splice(0)) s.close();
  }
}
