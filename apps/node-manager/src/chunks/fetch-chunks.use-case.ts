import { Injectable } from '@nestjs/common';
import { ErrorCode, isChunkKey, MnemoError } from '@mnemo/kv-core';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ChunkDataSchema } from '@mnemo/proto';

export type ChunkDataInit = MessageInitShape<typeof ChunkDataSchema>;

/**
 * Serves KV chunks to other nodes (ChunkTransfer.FetchChunks). The node has no tiered KV store
 * yet, so every well-formed key is answered as `missing` — the honest answer, which makes the
 * caller recompute — and the contract, address and error mapping are already in place.
 */
@Injectable()
export class FetchChunksUseCase {
  *execute(keys: readonly string[], layerStart: number, layerEnd: number): Generator<ChunkDataInit> {
    if (!(layerEnd > layerStart)) throw new MnemoError(ErrorCode.InvalidRequest, `empty layer range [${layerStart}, ${layerEnd})`);
    const bad = keys.find((k) => !isChunkKey(k));
    if (bad !== undefined) throw new MnemoError(ErrorCode.InvalidRequest, `not a chunk key: ${JSON.stringify(bad)}`);
    for (const key of keys) yield { key, layerStart, layerEnd, missing: true };
  }
}
