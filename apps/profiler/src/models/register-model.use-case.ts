import { Inject, Injectable } from '@nestjs/common';
import type { Repository } from 'typeorm';
import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import { MODEL_REPOSITORY } from '../database/database.module.js';
import { PgError, sqlState } from '../database/pg-error.codes.js';
import { ModelEntity } from './model.entity.js';
import type { RegisterModelCommand } from './register-model.command.js';

/**
 * Registers a model. Idempotent for an identical record (services re-register on every
 * boot); the same id with other attributes is a conflict. A derived model's base must
 * exist (not_found) and share its architecture and depth (invalid_request), because KV
 * reuse between them needs identical layer shapes.
 */
@Injectable()
export class RegisterModelUseCase {
  constructor(@Inject(MODEL_REPOSITORY) private readonly models: Repository<ModelEntity>) {}

  async execute(cmd: RegisterModelCommand): Promise<ModelEntity> {
    const existing = await this.models.findOneBy({ id: cmd.id });
    if (existing) return this.sameOrConflict(existing, cmd);
    if (cmd.baseModelId !== null) {
      const base = await this.models.findOneBy({ id: cmd.baseModelId });
      if (!base) throw new MnemoError(ErrorCode.NotFound, `base model ${cmd.baseModelId} is not registered`, { model: cmd.baseModelId });
      if (base.architecture !== cmd.architecture || base.numLayers !== cmd.numLayers) {
        throw new MnemoError(
          ErrorCode.InvalidRequest,
          `model ${cmd.id} (${cmd.architecture}, ${cmd.numLayers} layers) cannot ` +
            `derive from ${base.id} (${base.architecture}, ${base.numLayers} layers)`,
          { base: base.id },
        );
      }
    }
    try {
      await this.models.insert({ id: cmd.id, architecture: cmd.architecture, numLayers: cmd.numLayers, baseModelId: cmd.baseModelId });
    } catch (e) {
      const state = sqlState(e);
      // A concurrent registration of the same id won the race: judge against what it stored.
      if (state === PgError.UNIQUE_VIOLATION) return this.sameOrConflict(await this.models.findOneByOrFail({ id: cmd.id }), cmd);
      if (state === PgError.FOREIGN_KEY_VIOLATION)
        throw new MnemoError(ErrorCode.NotFound, `base model ${cmd.baseModelId} is not registered`, { model: cmd.baseModelId });
      throw e;
    }
    return this.models.findOneByOrFail({ id: cmd.id });
  }

  private sameOrConflict(existing: ModelEntity, cmd: RegisterModelCommand): ModelEntity {
    const same =
      existing.architecture === cmd.architecture && existing.numLayers === cmd.numLayers && existing.baseModelId === cmd.baseModelId;
    if (same) return existing;
    throw new MnemoError(ErrorCode.Conflict, `model ${cmd.id} is already registered with other attributes`, { model: cmd.id });
  }
}
