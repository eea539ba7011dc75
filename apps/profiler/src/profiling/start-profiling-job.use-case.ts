import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { ErrorCode, MnemoError, patternGrid } from '@mnemo/kv-core';
import { syntheticPrompts } from '@mnemo/engine';
import { MODEL_PAIR_REPOSITORY, MODEL_REPOSITORY, PROFILING_JOB_REPOSITORY } from '../database/database.module.js';
import { ModelEntity } from '../models/model.entity.js';
import { ModelPairEntity } from '../pairs/model-pair.entity.js';
import { PAIR_EVALUATOR, type PairEvaluatorPort } from './pair-evaluator.port.js';
import { ProfilingJobEntity } from './profiling-job.entity.js';
import { ProfilingJobRunner } from './profiling-job.runner.js';
import type { ProfilingLimits, StartProfilingJobCommand } from './start-profiling-job.command.js';
import { PROFILING_LIMITS } from './profiling.tokens.js';

/**
 * Queues a profiling job for a registered pair. The prompts are turned into token ids
 * here and stored with the job, so a resumed run measures exactly the same data; the
 * grid size comes from the registered layer count. Unknown pair → not_found; a prompt
 * the derived model's tokenizer cannot take, or too long → invalid_request.
 */
@Injectable()
export class StartProfilingJobUseCase {
  constructor(
    @Inject(MODEL_PAIR_REPOSITORY) private readonly pairs: Repository<ModelPairEntity>,
    @Inject(MODEL_REPOSITORY) private readonly models: Repository<ModelEntity>,
    @Inject(PROFILING_JOB_REPOSITORY) private readonly jobs: Repository<ProfilingJobEntity>,
    @Inject(PAIR_EVALUATOR) private readonly evaluator: PairEvaluatorPort,
    @Inject(PROFILING_LIMITS) private readonly limits: ProfilingLimits,
    @Inject(ProfilingJobRunner) private readonly runner: ProfilingJobRunner,
  ) {}

  async execute(cmd: StartProfilingJobCommand): Promise<ProfilingJobEntity> {
    const pair = await this.pairs.findOneBy({ baseModelId: cmd.base, derivedModelId: cmd.derived });
    if (!pair)
      throw new MnemoError(ErrorCode.NotFound, `pair ${cmd.base} → ${cmd.derived} is not registered`, {
        base: cmd.base,
        derived: cmd.derived,
      });
    const derived = await this.models.findOneByOrFail({ id: cmd.derived });
    const prompts = this.prompts(cmd);
    const id = randomUUID();
    await this.jobs.insert({
      id,
      baseModelId: cmd.base,
      derivedModelId: cmd.derived,
      status: 'queued',
      prompts,
      continuationTokens: cmd.continuationTokens,
      totalPatterns: patternGrid(derived.numLayers).length,
      donePatterns: 0,
      runs: 0,
      doneAtRunStart: 0,
    });
    this.runner.kick();
    return this.jobs.findOneByOrFail({ id });
  }

  private prompts(cmd: StartProfilingJobCommand): number[][] {
    const d = cmd.dataset;
    if (d.kind === 'synthetic') return syntheticPrompts(d.prompts, d.tokens, d.seed);
    return d.lines.map((text, i) => {
      let ids: number[];
      try {
        ids = this.evaluator.tokenize(cmd.derived, text);
      } catch (e) {
        throw new MnemoError(ErrorCode.InvalidRequest, `no tokenizer for ${cmd.derived}: ${(e as Error).message}`);
      }
      if (ids.length === 0 || ids.length > this.limits.maxPromptTokens) {
        throw new MnemoError(
          ErrorCode.InvalidRequest,
          `dataset prompt ${i + 1} has ${ids.length} tokens; 1–${this.limits.maxPromptTokens} allowed`,
        );
      }
      return ids;
    });
  }
}
