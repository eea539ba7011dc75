export * from './gen/mnemo/v1/common_pb.js';
export * from './gen/mnemo/v1/gateway_pb.js';
export * from './gen/mnemo/v1/chunk_transfer_pb.js';
export * from './gen/mnemo/v1/nats_pb.js';
export * from './gen/mnemo/v1/kv_pb.js';
export * from './subjects.js';
export * from './nats.codec.js';
export * from './grpc.loader.js';
