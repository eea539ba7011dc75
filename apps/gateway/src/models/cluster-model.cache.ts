import { Inject, Injectable } from '@nestjs/common';
import type { ModelInfo } from '@mnemo/proto';
import { SchedulerClient } from '../nats/scheduler.client.js';

/** How long a models list is trusted before asking the scheduler again. */
const FRESH_MS = 2_000;
/** A miss refreshes the list, but not more often than this (an unknown-model flood must not flood the scheduler). */
const MISS_REFRESH_MS = 250;
const LIST_TIMEOUT_MS = 5_000;

/**
 * The models some live node serves, as the scheduler reports them, cached briefly: every
 * inference needs its model's context size and a stale entry only costs a rejected or
 * failed request, never a wrong answer.
 */
@Injectable()
export class ClusterModelCache {
  private cached?: { at: number; models: readonly ModelInfo[] };
  private inFlight?: Promise<readonly ModelInfo[]>;

  constructor(@Inject(SchedulerClient) private readonly scheduler: SchedulerClient) {}

  async list(): Promise<readonly ModelInfo[]> {
    if (this.cached && Date.now() - this.cached.at < FRESH_MS) return this.cached.models;
    return this.refresh();
  }

  async find(id: string): Promise<ModelInfo | undefined> {
    const hit = (await this.list()).find((m) => m.id === id);
    if (hit || (this.cached && Date.now() - this.cached.at < MISS_REFRESH_MS)) return hit;
    // A node may have come up since the last list: look once more before saying 404.
    return (await this.refresh()).find((m) => m.id === id);
  }

  private refresh(): Promise<readonly ModelInfo[]> {
    // Concurrent callers share one request.
    this.inFlight ??= this.scheduler.listModels(LIST_TIMEOUT_MS).then(
      (models) => {
        this.cached = { at: Date.now(), models };
        this.inFlight = undefined;
        return models;
      },
      (e: unknown) => {
        this.inFlight = undefined;
        throw e;
      },
    );
    return this.inFlight;
  }
}
