import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ModelRecordSchema } from '@mnemo/proto';
import type { ModelEntity } from './model.entity.js';

export function toModelRecord(m: ModelEntity): MessageInitShape<typeof ModelRecordSchema> {
  return {
    id: m.id,
    architecture: m.architecture,
    numLayers: m.numLayers,
    baseModelId: m.baseModelId ?? '',
    createdAtUnixMs: m.createdAt.getTime(),
  };
}
