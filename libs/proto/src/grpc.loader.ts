import { loadPackageDefinition, type GrpcObject, type ServiceClientConstructor, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Folder holding `mnemo/v1/*.proto`; resolves the same from src/ (jest) and dist/ (built). */
export const PROTO_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../proto');

/**
 * Options that make proto-loader objects match the generated TypeScript shapes (`*_pb.ts`):
 * camelCase field names, 64-bit fields as numbers (our only one is the seed; times are doubles), enums as numbers,
 * scalar defaults filled, and unset `optional` fields left undefined.
 */
export const PROTO_LOADER_OPTIONS: Options = {
  keepCase: false,
  longs: Number,
  enums: Number,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

interface MnemoV1 {
  Gateway: ServiceClientConstructor;
  ChunkTransfer: ServiceClientConstructor;
}

/** The gRPC services of gateway.proto and chunk_transfer.proto, loaded from the same .proto files. */
export function loadGrpcServices(): { Gateway: ServiceDefinition; ChunkTransfer: ServiceDefinition; clients: MnemoV1 } {
  const def = loadSync(['mnemo/v1/gateway.proto', 'mnemo/v1/chunk_transfer.proto'], PROTO_LOADER_OPTIONS);
  const pkg = loadPackageDefinition(def) as GrpcObject & { mnemo: { v1: MnemoV1 } };
  const v1 = pkg.mnemo.v1;
  return { Gateway: v1.Gateway.service, ChunkTransfer: v1.ChunkTransfer.service, clients: v1 };
}
