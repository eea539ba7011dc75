import { Inject, Injectable } from '@nestjs/common';
import { ErrorCode, isChunkKey, MnemoError } from '@mnemo/kv-core';
import { crc32c } from '@mnemo/native-cuda';
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ChunkDataSchema } from '@mnemo/proto';
import { CHUNK_STORE, type ChunkStore } from '../kv-store/chunk-store.port.js';

export type ChunkDataInit = MessageInitShape<typeof ChunkDataSchema>;

/** Keys one call may ask for: a bound on the work a single request can make a node do. */
export const MAX_FETCH_KEYS = 4096;

/**
 * Serves KV chunks to other nodes (ChunkTransfer.FetchChunks): one answer per key, in request
 * order, each the verified layer range from the host or SSD tier with the CRC32C of exactly the
 * bytes sent, or `missing` when this node does not hold all of it (the caller recomputes).
 * Validation happens before the first answer, so a bad request changes nothing and streams nothing.
 */
@Injectable()
export class FetchChunksUseCase {
  constructor(@Inject(CHUNK_STORE) private readonly store: ChunkStore) {}

  validate(keys: readonly string[], layerStart: number, layerEnd: number): void {
    if (!(layerEnd > layerStart)) throw new MnemoError(ErrorCode.InvalidRequest, `empty layer range [${layerStart}, ${layerEnd})`);
    if (keys.length > MAX_FETCH_KEYS)
      throw new MnemoError(ErrorCode.InvalidRequest, `at most ${MAX_FETCH_KEYS} keys per call, got ${keys.length}`);
    const bad = keys.find((k) => !isChunkKey(k));
    if (bad !== undefined) throw new MnemoError(ErrorCode.InvalidRequest, `not a chunk key: ${JSON.stringify(bad)}`);
  }

  /** Call {@link validate} first. Reads one chunk at a time, so a slow reader holds at most one in memory. */
  async *execute(keys: readonly string[], layerStart: number, layerEnd: number): AsyncGenerator<ChunkDataInit> {
    for (const key of keys) {
      const slice = await this.store.readChunk(key, layerStart, layerEnd);
      if (!slice) {
        yield { key, layerStart, layerEnd, missing: true };
        continue;
      }
      const payload = new Uint8Array(slice.payload.buffer, slice.payload.byteOffset, slice.payload.byteLength);
      yield { key, layerStart, layerEnd, payload, crc32c: crc32c(payload) };
    }
  }
}
