import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ModelPairRecordSchema } from '@mnemo/proto';
import type { ModelPairEntity } from './model-pair.entity.js';

export function toModelPairRecord(p: ModelPairEntity): MessageInitShape<typeof ModelPairRecordSchema> {
  return { base: p.baseModelId, derived: p.derivedModelId, createdAtUnixMs: p.createdAt.getTime() };
}
