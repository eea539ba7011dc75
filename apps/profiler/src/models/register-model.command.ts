import { ErrorCode, MnemoError } from '@mnemo/kv-core';
import type { RegisterModelRequest } from '@mnemo/proto';

// Hugging Face style ids ("org/name-v2") and short architecture names ("llama").
const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/;
const ARCHITECTURE = /^[a-z0-9][a-z0-9._-]{0,99}$/;
const MAX_LAYERS = 4096;

/** A validated RegisterModelRequest; `from` throws invalid_request listing every problem. */
export class RegisterModelCommand {
  private constructor(
    readonly id: string,
    readonly architecture: string,
    readonly numLayers: number,
    readonly baseModelId: string | null,
  ) {}

  static from(req: Pick<RegisterModelRequest, 'id' | 'architecture' | 'numLayers' | 'baseModelId'>): RegisterModelCommand {
    const problems: string[] = [];
    if (!MODEL_ID.test(req.id)) problems.push(`id ${JSON.stringify(req.id)} must match ${MODEL_ID}`);
    if (!ARCHITECTURE.test(req.architecture)) problems.push(`architecture ${JSON.stringify(req.architecture)} must match ${ARCHITECTURE}`);
    if (!Number.isInteger(req.numLayers) || req.numLayers < 1 || req.numLayers > MAX_LAYERS)
      problems.push(`num_layers must be 1..${MAX_LAYERS}`);
    // proto3 has no null: an empty string means "no base".
    const base = req.baseModelId === '' ? null : req.baseModelId;
    if (base !== null && !MODEL_ID.test(base)) problems.push(`base_model_id ${JSON.stringify(base)} must match ${MODEL_ID}`);
    if (base !== null && base === req.id) problems.push('a model cannot be its own base');
    if (problems.length > 0) throw new MnemoError(ErrorCode.InvalidRequest, problems.join('; '), { problems });
    return new RegisterModelCommand(req.id, req.architecture, req.numLayers, base);
  }
}
