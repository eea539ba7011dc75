import { Inject, Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { MODEL_REPOSITORY } from '../database/database.module.js';
import { ModelEntity } from './model.entity.js';

/** Every registered model, oldest first (the registry is small: tens of rows). */
@Injectable()
export class ListModelRecordsUseCase {
  constructor(@Inject(MODEL_REPOSITORY) private readonly models: Repository<ModelEntity>) {}

  execute(): Promise<ModelEntity[]> {
    return this.models.find({ order: { createdAt: 'ASC', id: 'ASC' } });
  }
}
