import type { MessageInitShape } from '@bufbuild/protobuf';
import type { TokenEventSchema } from '@mnemo/proto';

export type TokenEventInit = MessageInitShape<typeof TokenEventSchema>;

/** Where a request's TokenEvents go: the gateway inbox named in the request (NATS in production). */
export interface TokenSink {
  emit(replySubject: string, event: TokenEventInit): void;
}

export const TOKEN_SINK = Symbol('TOKEN_SINK');
