import { Inject, Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { MODEL_PAIR_REPOSITORY } from '../database/database.module.js';
import { ModelPairEntity } from './model-pair.entity.js';

/** Registered pairs, oldest first; only those of `base` when given. */
@Injectable()
export class ListModelPairsUseCase {
  constructor(@Inject(MODEL_PAIR_REPOSITORY) private readonly pairs: Repository<ModelPairEntity>) {}

  execute(base: string | null): Promise<ModelPairEntity[]> {
    return this.pairs.find({
      where: base === null ? {} : { baseModelId: base },
      order: { createdAt: 'ASC', baseModelId: 'ASC', derivedModelId: 'ASC' },
    });
  }
}
