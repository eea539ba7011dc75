import { ErrorReplySchema } from './gen/mnemo/v1/common_pb.js';
import { create, fromBinary, toBinary, type DescMessage, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';

/**
 * Binary protobuf on every NATS subject. `encodeMessage` takes a plain init object (missing
 * fields get proto3 defaults), so callers never build message classes by hand.
 */
export function encodeMessage<D extends DescMessage>(schema: D, init: MessageInitShape<D>): Uint8Array {
  return toBinary(schema, create(schema, init));
}

/** Decodes a payload; throws on malformed bytes (callers answer with ErrorReply invalid_request). */
export function decodeMessage<D extends DescMessage>(schema: D, data: Uint8Array): MessageShape<D> {
  return fromBinary(schema, data);
}

/**
 * Replies that are either `schema` or an ErrorReply (nodePrefetch, nodeForget): an ErrorReply
 * always has a code (field 1, a string), which no such reply's encoding can be read as.
 */
export function decodeReplyOrError<D extends DescMessage>(
  schema: D,
  data: Uint8Array,
): { ok: MessageShape<D> } | { error: MessageShape<typeof ErrorReplySchema> } {
  try {
    const e = fromBinary(ErrorReplySchema, data);
    if (e.code) return { error: e };
  } catch {
    // Not an ErrorReply.
  }
  return { ok: fromBinary(schema, data) };
}
