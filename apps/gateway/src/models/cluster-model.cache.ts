import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
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

  /**
   * The model, or undefined when live nodes serve others only (a 404). With no live node at all
   * (the cluster starting, or recovering from a NATS restart) nobody can say a model does not
   * exist: that is NoNodeAvailable (503), which a client retries.
   */
  async find(id: string): Promise<ModelInfo | undefined> {
    let models = await this.list();
    let hit = models.find((m) => m.id === id);
    if (!hit && !(this.cached && Date.now() - this.cached.at < MISS_REFRESH_MS)) {
      // A node may have come up since the last list: look once more before saying 404.
      models = await this.refresh();
      hit = models.find((m) => m.id === id);
    }
    if (!hit && models.length === 0)
      throw new MnemoError(
        ErrorCode.NoNodeAvailable,
        'no node is serving any model right now (the cluster is starting or recovering): retry shortly',
      );
    return hit;
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
