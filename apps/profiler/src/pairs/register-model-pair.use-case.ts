import { Inject, Injectable } from '@nestjs/common';
import { In, type Repository } from 'typeorm';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { MODEL_PAIR_REPOSITORY, MODEL_REPOSITORY } from '../database/database.module.js';
import { PgError, sqlState } from '../database/pg-error.codes.js';
import { ModelEntity } from '../models/model.entity.js';
import { ModelPairEntity } from './model-pair.entity.js';
import type { RegisterModelPairCommand } from './register-model-pair.command.js';

/**
 * Registers base → derived for cross-model KV reuse. Both models must be registered
 * (not_found) with the same architecture and layer count (invalid_request): reusing a
 * layer's KV needs identical shapes. A pair registers once (conflict after that).
 */
@Injectable()
export class RegisterModelPairUseCase {
  constructor(
    @Inject(MODEL_REPOSITORY) private readonly models: Repository<ModelEntity>,
    @Inject(MODEL_PAIR_REPOSITORY) private readonly pairs: Repository<ModelPairEntity>,
  ) {}

  async execute(cmd: RegisterModelPairCommand): Promise<ModelPairEntity> {
    const found = await this.models.findBy({ id: In([cmd.base, cmd.derived]) });
    const base = found.find((m) => m.id === cmd.base);
    const derived = found.find((m) => m.id === cmd.derived);
    const missing = [cmd.base, cmd.derived].filter((id) => !found.some((m) => m.id === id));
    if (!base || !derived) throw new MnemoError(ErrorCode.NotFound, `model(s) not registered: ${missing.join(', ')}`, { models: missing });
    if (base.architecture !== derived.architecture || base.numLayers !== derived.numLayers) {
      throw new MnemoError(
        ErrorCode.InvalidRequest,
        `models of one pair must share architecture and depth: ${base.id} is ` +
          `${base.architecture}/${base.numLayers}, ${derived.id} is ${derived.architecture}/${derived.numLayers}`,
        { base: base.id, derived: derived.id },
      );
    }
    try {
      await this.pairs.insert({ baseModelId: base.id, derivedModelId: derived.id });
    } catch (e) {
      const state = sqlState(e);
      if (state === PgError.UNIQUE_VIOLATION)
        throw new MnemoError(ErrorCode.Conflict, `pair ${base.id} → ${derived.id} is already registered`, {
          base: base.id,
          derived: derived.id,
        });
      // A model was deleted between the check and the insert.
      if (state === PgError.FOREIGN_KEY_VIOLATION)
        throw new MnemoError(ErrorCode.NotFound, `model(s) no longer registered: ${base.id}, ${derived.id}`);
      throw e;
    }
    return this.pairs.findOneByOrFail({ baseModelId: base.id, derivedModelId: derived.id });
  }
}
