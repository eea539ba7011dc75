import { fromBinary, toBinary, create } from '@bufbuild/protobuf';
import { ChunkDataSchema } from './gen/mnemo/v1/chunk_transfer_pb.js';
import { InferRequestSchema } from './gen/mnemo/v1/gateway_pb.js';
import { loadGrpcServices } from './grpc.loader.js';

describe(loadGrpcServices.name, () => {
  const sut = loadGrpcServices();

  it('loads the Gateway service with a server-streaming Infer', () => {
    expect(Object.keys(sut.Gateway).sort()).toEqual(['Advise', 'DeleteSession', 'Infer', 'Invalidate']);
    expect(sut.Gateway.Infer).toMatchObject({ path: '/mnemo.v1.Gateway/Infer', requestStream: false, responseStream: true });
  });

  it('loads ChunkTransfer.FetchChunks as a server stream', () => {
    expect(sut.ChunkTransfer.FetchChunks).toMatchObject({ path: '/mnemo.v1.ChunkTransfer/FetchChunks', responseStream: true });
  });

  it('speaks the same bytes as the generated types', () => {
    const wire = sut.Gateway.Infer.requestSerialize({ model: 'm', prompt: 'hi', maxTokens: 5, seed: 9, priority: 1 });
    const viaEs = fromBinary(InferRequestSchema, wire);
    expect(viaEs.seed).toBe(9n);
    expect(viaEs).toMatchObject({ model: 'm', prompt: 'hi', maxTokens: 5, priority: 1 });
    expect(viaEs.temperature).toBeUndefined();

    const back = sut.Gateway.Infer.requestDeserialize(
      Buffer.from(toBinary(InferRequestSchema, create(InferRequestSchema, { model: 'm', topP: 0.5 }))),
    );
    expect(back).toMatchObject({ model: 'm', topP: 0.5, priority: 0 });
    // Unset optional fields stay undefined, so the gateway can apply its own defaults.
    expect(back.maxTokens).toBeUndefined();
    expect(back.temperature).toBeUndefined();
  });

  it('decodes chunk payloads as bytes with their crc', () => {
    const bytes = toBinary(ChunkDataSchema, create(ChunkDataSchema, { key: 'k', payload: Uint8Array.from([1, 2, 3]), crc32c: 0xdeadbeef }));
    const msg = sut.ChunkTransfer.FetchChunks.responseDeserialize(Buffer.from(bytes)) as { payload: Buffer; crc32c: number };
    expect([...msg.payload]).toEqual([1, 2, 3]);
    expect(msg.crc32c).toBe(0xdeadbeef);
  });
});
