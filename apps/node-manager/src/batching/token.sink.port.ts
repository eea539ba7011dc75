import type { MessageInitShape } from '@bufbuild/protobuf';
import type { TokenEventSchema } from '@mnemo/proto';
import type { Sequence } from '../shared/sequence.js';

export type TokenEventInit = MessageInitShape<typeof TokenEventSchema>;

/**
 * Where a sequence's TokenEvents go: the gateway inbox named in its request (NATS in
 * production). The sink stamps the attempt and node id, and sends nothing for a sequence
 * cancelled silently (`Sequence.silent`).
 */
export interface TokenSink {
  emit(seq: Sequence, event: TokenEventInit): void;
}

export const TOKEN_SINK = Symbol('TOKEN_SINK');
