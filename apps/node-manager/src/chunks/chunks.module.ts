import { Module } from '@nestjs/common';
import { ChunkTransferGrpcServer } from './chunk-transfer.grpc-server.js';
import { FetchChunksUseCase } from './fetch-chunks.use-case.js';

/** Node ↔ node KV chunk transfer (gRPC). */
@Module({
  providers: [FetchChunksUseCase, ChunkTransferGrpcServer],
  exports: [ChunkTransferGrpcServer],
})
export class ChunksModule {}
