import { Module } from '@nestjs/common';
import { KvDirectoryModule } from '../kv-directory/kv-directory.module.js';
import { QueryIndexerUseCase } from '../indexer/query-indexer.use-case.js';
import { VllmSourcesService } from './vllm-sources.service.js';

/** Interoperability: external engines' vLLM-format KV events in, the KV indexer API out. */
@Module({
  imports: [KvDirectoryModule],
  providers: [VllmSourcesService, QueryIndexerUseCase],
  exports: [QueryIndexerUseCase],
})
export class InteropModule {}
