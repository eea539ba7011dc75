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
